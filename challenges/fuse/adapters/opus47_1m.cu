// benchtui adapter for opus47_1m (published benchmark). Translation only: its
// templated host launcher launch_fused_softmax_topk<K>(logits, idx, probs, B,
// T, V, stream) is instantiated for each k the suite asks for (the checks'
// 1, 5 and 32, and 8 and 16, which the answer instantiates itself), with the
// rows passed as B = rows, T = 1. Any other k is refused, not approximated.
// ANSWER_SHA256 = {"fused_softmax_topk.cu": "d3c0f93236f99d165c634494a651cbb4a9aaf3bfb756e5d5c1523fe05b1f397d"}
#include "fused_softmax_topk.cu"

template <int K>
static int launch(const float* logits, int rows, int V, float* top_probs, int* top_idx) {
    launch_fused_softmax_topk<K>(logits, top_idx, top_probs, rows, 1, V, 0);
    return static_cast<int>(cudaGetLastError());
}

extern "C" int benchtui_softmax_topk(const float* logits, int rows, int V, int k,
                                     float* top_probs, int* top_idx) {
    switch (k) {
        case 1: return launch<1>(logits, rows, V, top_probs, top_idx);
        case 5: return launch<5>(logits, rows, V, top_probs, top_idx);
        case 8: return launch<8>(logits, rows, V, top_probs, top_idx);
        case 16: return launch<16>(logits, rows, V, top_probs, top_idx);
        case 32: return launch<32>(logits, rows, V, top_probs, top_idx);
        default: return static_cast<int>(cudaErrorInvalidValue);
    }
}
