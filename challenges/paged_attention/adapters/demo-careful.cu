// benchtui shim for demo-careful: its host function is the prompt's.
#include "paged_attention.cu"

extern "C" int benchtui_paged_attention(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                        const __nv_bfloat16* v_cache, const int* block_tables,
                                        const int* context_lens, float* out, int num_seqs, int num_heads,
                                        int num_kv_heads, int head_dim, int block_size, int max_blocks_per_seq,
                                        int num_blocks, float scale) {
    return static_cast<int>(paged_attention_decode(q, k_cache, v_cache, block_tables, context_lens, out, num_seqs,
                                                   num_heads, num_kv_heads, head_dim, block_size,
                                                   max_blocks_per_seq, num_blocks, scale, 0));
}
