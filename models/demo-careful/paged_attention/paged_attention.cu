// Paged-attention decode: one query token per sequence, keys and values read
// through the block table, online softmax in float32.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>

namespace {

constexpr int kWarps = 4;  // warps per (sequence, head) block

// One block per (query head, sequence). Warp w takes tokens w, w + kWarps, ...;
// lane l holds elements l, l + 32, ... of the head (D / 32 of them), so each
// warp reads one token's key and value row in coalesced 64-byte pieces.
template <int D>
__global__ void paged_attention_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                                       const __nv_bfloat16* __restrict__ v_cache, const int* __restrict__ block_tables,
                                       const int* __restrict__ context_lens, float* __restrict__ out, int num_heads,
                                       int num_kv_heads, int block_size, int max_blocks_per_seq, float scale) {
    constexpr int kPerLane = D / 32;
    const int head = blockIdx.x, seq = blockIdx.y;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int kv_head = head / (num_heads / num_kv_heads);
    const int ctx = context_lens[seq];
    const int* table = block_tables + (size_t)seq * max_blocks_per_seq;

    float qv[kPerLane], acc[kPerLane];
    const __nv_bfloat16* qp = q + ((size_t)seq * num_heads + head) * D;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
        qv[i] = __bfloat162float(qp[lane + 32 * i]) * scale;
        acc[i] = 0.f;
    }
    float m = -INFINITY, l = 0.f;  // running maximum and sum of exp(score - m)
    for (int t = warp; t < ctx; t += kWarps) {
        const int block = table[t / block_size];
        const size_t base = (((size_t)block * block_size + t % block_size) * num_kv_heads + kv_head) * D;
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) s += qv[i] * __bfloat162float(k_cache[base + lane + 32 * i]);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        const float m_new = fmaxf(m, s);
        const float rescale = expf(m - m_new);  // 0 on the first token (m = -inf)
        const float p = expf(s - m_new);
        l = l * rescale + p;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) acc[i] = acc[i] * rescale + p * __bfloat162float(v_cache[base + lane + 32 * i]);
        m = m_new;
    }

    // Merge the warps' (m, l, acc): rescale each to the common maximum.
    __shared__ float sm_m[kWarps], sm_l[kWarps], sm_acc[kWarps][D];
    if (lane == 0) {
        sm_m[warp] = m;
        sm_l[warp] = l;
    }
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) sm_acc[warp][lane + 32 * i] = acc[i];
    __syncthreads();
    if (warp != 0) return;
    float m_all = -INFINITY;
    for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, sm_m[w]);
    float l_all = 0.f, o[kPerLane] = {};
    for (int w = 0; w < kWarps; ++w) {
        if (sm_m[w] == -INFINITY) continue;  // a warp that saw no token (short contexts)
        const float c = expf(sm_m[w] - m_all);
        l_all += sm_l[w] * c;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) o[i] += sm_acc[w][lane + 32 * i] * c;
    }
    float* op = out + ((size_t)seq * num_heads + head) * D;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) op[lane + 32 * i] = o[i] / l_all;
}

template <int D>
cudaError_t launch(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                   const int* block_tables, const int* context_lens, float* out, int num_seqs, int num_heads,
                   int num_kv_heads, int block_size, int max_blocks_per_seq, float scale, cudaStream_t stream) {
    dim3 grid(num_heads, num_seqs);
    paged_attention_kernel<D><<<grid, kWarps * 32, 0, stream>>>(q, k_cache, v_cache, block_tables, context_lens, out,
                                                                num_heads, num_kv_heads, block_size,
                                                                max_blocks_per_seq, scale);
    return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t paged_attention_decode(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                              const __nv_bfloat16* v_cache, const int* block_tables,
                                              const int* context_lens, float* out, int num_seqs, int num_heads,
                                              int num_kv_heads, int head_dim, int block_size, int max_blocks_per_seq,
                                              int num_blocks, float scale, cudaStream_t stream) {
    (void)num_blocks;
    if (num_seqs <= 0 || num_kv_heads <= 0 || num_heads % num_kv_heads != 0 || block_size <= 0)
        return cudaErrorInvalidValue;
    switch (head_dim) {
        case 64:
            return launch<64>(q, k_cache, v_cache, block_tables, context_lens, out, num_seqs, num_heads, num_kv_heads,
                              block_size, max_blocks_per_seq, scale, stream);
        case 128:
            return launch<128>(q, k_cache, v_cache, block_tables, context_lens, out, num_seqs, num_heads,
                               num_kv_heads, block_size, max_blocks_per_seq, scale, stream);
        case 256:
            return launch<256>(q, k_cache, v_cache, block_tables, context_lens, out, num_seqs, num_heads,
                               num_kv_heads, block_size, max_blocks_per_seq, scale, stream);
        default:
            return cudaErrorInvalidValue;
    }
}
