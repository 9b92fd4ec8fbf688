// Writes far past the end of its output buffer.
#include "softmax_topk.cu"

__global__ void scribble(int* p) { p[(size_t)1 << 36] = 1; }

extern "C" int benchtui_softmax_topk(const float* logits, int rows, int V, int k, float* top_probs, int* top_idx) {
    scribble<<<1, 1>>>(top_idx);
    return 0;
}
