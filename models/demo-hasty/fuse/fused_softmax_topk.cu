#include <cuda_runtime.h>
#include <stdio.h>
#include <math.h>

// Fused softmax + top-k kernel.
// Each block handles one row. Pass 1 finds the max and sum with a block
// reduction, pass 2 keeps a per-thread top-k and merges through shared memory.

#define BLOCK 256
#define MAX_K 32

__device__ float warpReduceMax(float val) {
    for (int offset = 16; offset > 0; offset /= 2)
        val = fmaxf(val, __shfl_down_sync(0xffffffff, val, offset));
    return val;
}

__device__ float warpReduceSum(float val) {
    for (int offset = 16; offset > 0; offset /= 2)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

__global__ void fused_softmax_topk(const float* logits, float* out_probs, int* out_idx, int V, int k) {
    __shared__ float s_red[BLOCK / 32];
    __shared__ float s_vals[BLOCK * MAX_K / 8];
    __shared__ int s_idx[BLOCK * MAX_K / 8];

    const float* row = logits + blockIdx.x * V;
    int tid = threadIdx.x;

    // pass 1: max
    float local_max = -FLT_MAX;
    for (int i = tid; i < V; i += BLOCK) local_max = fmaxf(local_max, row[i]);
    local_max = warpReduceMax(local_max);
    if (tid % 32 == 0) s_red[tid / 32] = local_max;
    __syncthreads();
    float row_max = s_red[0];
    for (int w = 1; w < BLOCK / 32; w++) row_max = fmaxf(row_max, s_red[w]);
    __syncthreads();

    // pass 1b: sum of exp
    float local_sum = 0.0f;
    for (int i = tid; i < V; i += BLOCK) local_sum += __expf(row[i] - row_max);
    local_sum = warpReduceSum(local_sum);
    if (tid % 32 == 0) s_red[tid / 32] = local_sum;
    __syncthreads();
    float row_sum = 0.0f;
    for (int w = 0; w < BLOCK / 32; w++) row_sum += s_red[w];

    // pass 2: per-thread top-k (k small, insertion sort)
    float tv[MAX_K];
    int ti[MAX_K];
    for (int j = 0; j < k; j++) { tv[j] = -FLT_MAX; ti[j] = -1; }
    for (int i = tid; i < V; i += BLOCK) {
        float v = row[i];
        if (v > tv[k - 1]) {
            int j = k - 1;
            while (j > 0 && tv[j - 1] < v) { tv[j] = tv[j - 1]; ti[j] = ti[j - 1]; j--; }
            tv[j] = v; ti[j] = i;
        }
    }
    // only warp leaders publish their lists (TODO: merge inside the warp first)
    if (tid % 32 == 0) {
        for (int j = 0; j < k; j++) { s_vals[(tid / 32) * k + j] = tv[j]; s_idx[(tid / 32) * k + j] = ti[j]; }
    }
    __syncthreads();
    if (tid == 0) {
        for (int r = 0; r < k; r++) {
            int best = -1;
            for (int c = 0; c < (BLOCK / 32) * k; c++)
                if (best < 0 || s_vals[c] > s_vals[best]) best = c;
            out_idx[blockIdx.x * k + r] = s_idx[best];
            out_probs[blockIdx.x * k + r] = __expf(s_vals[best] - row_max) / row_sum;
            s_vals[best] = -FLT_MAX;
        }
    }
}

void launch_fused_softmax_topk(const float* d_logits, float* d_probs, int* d_idx, int rows, int V, int k) {
    fused_softmax_topk<<<rows, BLOCK>>>(d_logits, d_probs, d_idx, V, k);
}
