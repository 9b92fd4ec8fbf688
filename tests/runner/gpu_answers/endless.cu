// A kernel that never ends: it spins on a flag nobody sets.
#include "softmax_topk.cu"

__global__ void spin(volatile int* flag) { while (*flag == 0) { } }

extern "C" int benchtui_softmax_topk(const float* logits, int rows, int V, int k, float* top_probs, int* top_idx) {
    int* flag = nullptr;
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    spin<<<1, 1>>>(flag);
    return static_cast<int>(cudaDeviceSynchronize());
}
