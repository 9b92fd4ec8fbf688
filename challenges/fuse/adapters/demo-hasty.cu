// benchtui shim for demo-hasty: its launcher takes (logits, probs, idx, rows, V, k).
#include "fused_softmax_topk.cu"

extern "C" int benchtui_softmax_topk(const float* logits, int rows, int V, int k,
                                     float* top_probs, int* top_idx) {
    if (k < 1 || k > MAX_K || k > V) return static_cast<int>(cudaErrorInvalidValue);
    launch_fused_softmax_topk(logits, top_probs, top_idx, rows, V, k);
    return static_cast<int>(cudaGetLastError());
}
