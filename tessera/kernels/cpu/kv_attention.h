#pragma once
// Attention of m queries over a key/value cache (the kv_cache_attention op): query i attends to cache
// rows 0..positions[i]. Rows are read in chunks with an online softmax, so nothing is allocated and
// rows past a query's position are never touched; (query, head) pairs run in parallel.
#include <cstdint>

#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

struct KvAttentionShape {
  int64_t m = 0;             // queries
  int64_t q_heads = 0;       // Hq
  int64_t kv_heads = 0;      // Hk (Hq is a multiple)
  int64_t head_dim = 0;      // D of q and k
  int64_t value_dim = 0;     // Dv
  float scale = 1.0f;
};

// q [m, Hq, D] f32, k [rows, Hk, D] and v [rows, Hk, Dv] f32, or f16 when kv_f16 (a half-size cache,
// widened as it is read); out [m, Hq, Dv] f32; all packed. Every position must lie in 0..rows-1
// (checked by the caller).
void kv_attention(const KvAttentionShape& s, const float* q, const void* k, const void* v, bool kv_f16,
                  const int64_t* positions, float* out, runtime::ThreadPool& pool);

}  // namespace tessera::kernels
