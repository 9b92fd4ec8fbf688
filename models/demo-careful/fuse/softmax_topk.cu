// Fused softmax + top-k: one thread block per row, one pass over the logits.
//
// Each thread strides over its row and keeps (a) an online softmax state
// (running max m, running sum s of exp(x - m)) and (b) its own top-k list in
// descending order. The block then merges: the softmax states with a
// warp-shuffle reduction plus a shared-memory step, the top-k lists with k
// rounds of a block-wide arg-max over every thread's current head.
// Nothing of size V is written to global memory.
#ifndef FUSED_SOFTMAX_TOPK_CU
#define FUSED_SOFTMAX_TOPK_CU

#include <cfloat>
#include <cmath>
#include <cuda_runtime.h>

namespace fused_topk {

constexpr int kMaxK = 32;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct Cand {
    float v;
    int i;
};

// Larger value wins; on equal values the lower index wins. Casting to
// unsigned makes the empty-slot index -1 lose to any real index.
__device__ __forceinline__ bool better(float av, int ai, float bv, int bi) {
    return av > bv || (av == bv && static_cast<unsigned>(ai) < static_cast<unsigned>(bi));
}

// Merge two online-softmax states; exp(-inf - m) handled by the guards.
// Sums are double: a float sum over ~600 terms per thread drifts near 1e-5.
__device__ __forceinline__ void merge_state(float& m, double& s, float om, double os) {
    float nm = fmaxf(m, om);
    if (nm == -INFINITY) return;  // both empty
    s = (m == -INFINITY ? 0.0 : s * expf(m - nm)) + (om == -INFINITY ? 0.0 : os * expf(om - nm));
    m = nm;
}

__device__ __forceinline__ Cand warp_best(Cand c) {
    for (int off = 16; off > 0; off >>= 1) {
        float ov = __shfl_down_sync(0xffffffffu, c.v, off);
        int oi = __shfl_down_sync(0xffffffffu, c.i, off);
        if (better(ov, oi, c.v, c.i)) { c.v = ov; c.i = oi; }
    }
    return c;
}

__global__ void __launch_bounds__(kThreads)
softmax_topk_kernel(const float* __restrict__ logits, int V, int k,
                    float* __restrict__ top_probs, int* __restrict__ top_idx) {
    const int row = blockIdx.x;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const float* x = logits + static_cast<size_t>(row) * V;

    float lv[kMaxK];
    int li[kMaxK];
    for (int j = 0; j < kMaxK; ++j) { lv[j] = -INFINITY; li[j] = -1; }
    float m = -INFINITY;
    double s = 0.0;

    for (int i = tid; i < V; i += kThreads) {
        float v = __ldg(x + i);
        if (v != v) continue;  // NaN: not a candidate, not in the sum
        if (v > m) {           // new running max: rescale the sum
            s = (m == -INFINITY ? 0.0 : s * expf(m - v)) + 1.0;
            m = v;
        } else if (v != -INFINITY) {
            s += expf(v - m);
        }
        if (better(v, i, lv[k - 1], li[k - 1])) {  // insertion into the sorted list
            int j = k - 1;
            while (j > 0 && better(v, i, lv[j - 1], li[j - 1])) { lv[j] = lv[j - 1]; li[j] = li[j - 1]; --j; }
            lv[j] = v; li[j] = i;
        }
    }

    // Block-wide softmax statistics.
    __shared__ float sm[kWarps];
    __shared__ double ss[kWarps];
    for (int off = 16; off > 0; off >>= 1) {
        float om = __shfl_down_sync(0xffffffffu, m, off);
        double os = __shfl_down_sync(0xffffffffu, s, off);
        merge_state(m, s, om, os);
    }
    if (lane == 0) { sm[warp] = m; ss[warp] = s; }
    __syncthreads();
    if (tid == 0) {
        for (int w = 1; w < kWarps; ++w) merge_state(m, s, sm[w], ss[w]);
        sm[0] = m; ss[0] = s;
    }
    __syncthreads();
    const float row_max = sm[0];
    const double row_sum = ss[0];

    // k rounds of block arg-max over each thread's best remaining candidate.
    __shared__ Cand wbest[kWarps];
    __shared__ Cand winner;
    int head = 0;
    for (int r = 0; r < k; ++r) {
        Cand c = head < k ? Cand{lv[head], li[head]} : Cand{-INFINITY, -1};
        c = warp_best(c);
        if (lane == 0) wbest[warp] = c;
        __syncthreads();
        if (tid == 0) {
            Cand b = wbest[0];
            for (int w = 1; w < kWarps; ++w)
                if (better(wbest[w].v, wbest[w].i, b.v, b.i)) b = wbest[w];
            winner = b;
            top_idx[static_cast<size_t>(row) * k + r] = b.i;
            top_probs[static_cast<size_t>(row) * k + r] =
                b.v == -INFINITY ? 0.f : static_cast<float>(exp(double(b.v) - double(row_max)) / row_sum);
        }
        __syncthreads();
        // Indices are unique across threads, so exactly one owner advances.
        if (head < k && li[head] == winner.i) ++head;
    }
}

}  // namespace fused_topk

// Host launcher: device pointers, rows = B * T. Returns a cudaError_t value.
inline cudaError_t softmax_topk_launch(const float* logits, int rows, int V, int k,
                                       float* top_probs, int* top_idx, cudaStream_t stream = 0) {
    if (rows < 0 || V < 1 || k < 1 || k > fused_topk::kMaxK || k > V) return cudaErrorInvalidValue;
    if (rows == 0) return cudaSuccess;
    fused_topk::softmax_topk_kernel<<<rows, fused_topk::kThreads, 0, stream>>>(logits, V, k, top_probs, top_idx);
    return cudaGetLastError();
}

#endif  // FUSED_SOFTMAX_TOPK_CU
