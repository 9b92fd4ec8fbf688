// Paged attention (decode). One warp per (seq, head), walks the block table
// block by block with an online softmax. Fast and simple.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>

#define MAX_HEAD_DIM 256

__global__ void paged_attn_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                                  const int* block_tables, const int* context_lens, float* out, int num_heads,
                                  int num_kv_heads, int head_dim, int block_size, int max_blocks_per_seq,
                                  float scale) {
    int seq = blockIdx.y, head = blockIdx.x, lane = threadIdx.x;
    int kvh = head / (num_heads / num_kv_heads);
    int ctx = context_lens[seq];
    int per_lane = head_dim / 32;
    float qv[MAX_HEAD_DIM / 32], acc[MAX_HEAD_DIM / 32];
    for (int i = 0; i < per_lane; i++) {
        qv[i] = __bfloat162float(q[((size_t)seq * num_heads + head) * head_dim + lane + 32 * i]) * scale;
        acc[i] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    int n_blocks = (ctx + block_size - 1) / block_size;
    for (int b = 0; b < n_blocks; b++) {
        int phys = block_tables[seq * max_blocks_per_seq + b];
        // tokens in this block: a full block, except the last one
        int n_tok = (b == n_blocks - 1) ? ctx % block_size : block_size;
        for (int j = 0; j < n_tok; j++) {
            size_t base = (((size_t)phys * block_size + j) * num_kv_heads + kvh) * head_dim;
            float s = 0.f;
            for (int i = 0; i < per_lane; i++) s += qv[i] * __bfloat162float(k_cache[base + lane + 32 * i]);
            for (int off = 16; off; off /= 2) s += __shfl_xor_sync(0xffffffff, s, off);
            float m_new = fmaxf(m, s);
            float r = expf(m - m_new), p = expf(s - m_new);
            l = l * r + p;
            for (int i = 0; i < per_lane; i++) acc[i] = acc[i] * r + p * __bfloat162float(v_cache[base + lane + 32 * i]);
            m = m_new;
        }
    }
    for (int i = 0; i < per_lane; i++) out[((size_t)seq * num_heads + head) * head_dim + lane + 32 * i] = acc[i] / l;
}

extern "C" cudaError_t paged_attention_decode(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                              const __nv_bfloat16* v_cache, const int* block_tables,
                                              const int* context_lens, float* out, int num_seqs, int num_heads,
                                              int num_kv_heads, int head_dim, int block_size, int max_blocks_per_seq,
                                              int num_blocks, float scale, cudaStream_t stream) {
    dim3 grid(num_heads, num_seqs);
    paged_attn_kernel<<<grid, 32, 0, stream>>>(q, k_cache, v_cache, block_tables, context_lens, out, num_heads,
                                               num_kv_heads, head_dim, block_size, max_blocks_per_seq, scale);
    return cudaGetLastError();
}
