// The demo's correct kernel, called as its own adapter does.
#include "softmax_topk.cu"

extern "C" int benchtui_softmax_topk(const float* logits, int rows, int V, int k, float* top_probs, int* top_idx) {
    return static_cast<int>(softmax_topk_launch(logits, rows, V, k, top_probs, top_idx, 0));
}
