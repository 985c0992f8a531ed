// kv_cache_attention on the CUDA backend: one block per (queries, heads of a KV group) reads cache rows 0..position
// in chunks with an online softmax (the CPU kernel's scheme, kernels/cpu/kv_attention.h), so a decode
// step touches only the rows written so far and one compiled graph serves every position. Scores run
// one position per thread; the weighted sum of values runs one position per warp with the lanes over
// channels (coalesced rows). A position outside the cache raises the run's index-error flag and
// leaves that query's output 0.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/flash_attention.h"
#include "tessera/backends/cuda/launch.h"
#include "tessera/backends/cuda/steps.h"

namespace tessera::backends::cuda {

namespace {

using common::Lowering;
using common::Operand;

constexpr int kThreads = 256;
constexpr int kMaxHeadDim = 256;

// A block takes QT consecutive queries and HEADS query heads of one KV group (GQA), NH = QT * HEADS
// (query, head) pairs in all, so that each key and value row is read once for all of them (a prefill
// reads the cache QT * HEADS times less often than one pair per block would); the scores of a chunk of
// positions sit in shared memory (NH * CHUNK = 4096 floats, reused for the warps' partial sums at the
// end, one query at a time). Positions past a query's own are masked; a query past the last (the tail
// tile) or with a bad position is computed with no rows and not written.
constexpr const char* kSource = R"CUDA(
#include <cuda_fp16.h>
#define WARPS (THREADS / 32)
#define NH (QT * HEADS)
#define CHUNK (4096 / NH)
#define PER_LANE ((DV + 31) / 32)
#define NEG_INF (-__int_as_float(0x7f800000))
__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ void store_kv(float v, float* to) { *to = v; }
__device__ __forceinline__ void store_kv(float v, __half* to) { *to = __float2half_rn(v); }
// v as the cache holds it (rounded to KV_T), widened again.
__device__ __forceinline__ float as_cached(float v) {
  KV_T r;
  store_kv(v, &r);
  return widen(r);
}
// Reduces v[j] (max or sum) over the block; every thread gets the results.
__device__ __forceinline__ void block_reduce(float* v, float (*red)[NH], bool take_max) {
#pragma unroll
  for (int j = 0; j < NH; ++j) {
    for (int o = 16; o > 0; o >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, v[j], o);
      v[j] = take_max ? fmaxf(v[j], other) : v[j] + other;
    }
  }
  __syncthreads();  // red may still be read from the previous reduction
  if ((threadIdx.x & 31) == 0) {
#pragma unroll
    for (int j = 0; j < NH; ++j) red[threadIdx.x >> 5][j] = v[j];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < NH; ++j) {
    float r = red[0][j];
    for (int w = 1; w < WARPS; ++w) r = take_max ? fmaxf(r, red[w][j]) : r + red[w][j];
    v[j] = r;
  }
}
// The dot products of the block's scaled queries with one key row (read once).
__device__ __forceinline__ void scores(const float (*qs)[D], const KV_T* __restrict__ kr, float* s) {
#pragma unroll
  for (int j = 0; j < NH; ++j) s[j] = 0.0f;
#if VEC
  const uint4* k4 = (const uint4*)kr;
#pragma unroll 2
  for (int c = 0; c < D * (int)sizeof(KV_T) / 16; ++c) {
    const uint4 raw = __ldg(k4 + c);
    const KV_T* e = (const KV_T*)&raw;
    const int base = c * (16 / (int)sizeof(KV_T));
#pragma unroll
    for (int t = 0; t < 16 / (int)sizeof(KV_T); ++t) {
      const float kv = widen(e[t]);
#pragma unroll
      for (int j = 0; j < NH; ++j) s[j] += qs[j][base + t] * kv;
    }
  }
#else
  for (int c = 0; c < D; ++c) {
    const float kv = widen(kr[c]);
#pragma unroll
    for (int j = 0; j < NH; ++j) s[j] += qs[j][c] * kv;
  }
#endif
}
// The same over a key row in shared memory (the row a step appends, already rounded as cached).
__device__ __forceinline__ void scores_of_new(const float (*qs)[D], const float* kr, float* s) {
#pragma unroll
  for (int j = 0; j < NH; ++j) s[j] = 0.0f;
  for (int c = 0; c < D; ++c) {
    const float kv = kr[c];
#pragma unroll
    for (int j = 0; j < NH; ++j) s[j] += qs[j][c] * kv;
  }
}
extern "C" __global__ void __launch_bounds__(THREADS) tsr_kv_attention(const float* __restrict__ q,
    const KV_T* __restrict__ k, const KV_T* __restrict__ v, const POS_T* __restrict__ pos, float* __restrict__ out,
    int* error, int m, int hq, int hk, long long rows, float scale, long long q_stride, float* partials,
    unsigned* counters, const float* __restrict__ new_k, const float* __restrict__ new_v, KV_T* k_write,
    KV_T* v_write) {
  TSR_GRID_PROLOGUE();
  const int groups_per_query = hq / HEADS;
  // SPLITS blocks share one (queries, heads) unit, each over its own SPLIT_ROWS cache rows.
  const int split = blockIdx.x % SPLITS, unit = blockIdx.x / SPLITS;
  const int i0 = (unit / groups_per_query) * QT, h0 = (unit % groups_per_query) * HEADS;
  const int g = h0 / (hq / hk);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  __shared__ float qs[NH][D];
  __shared__ float ps[NH][CHUNK];
  __shared__ float red[WARPS][NH];
  long long p[QT];  // the last cache row each query reads; -1: none (past the last query, or invalid)
  long long p_max = -1;
#pragma unroll
  for (int t = 0; t < QT; ++t) {
    p[t] = -1;
    if (i0 + t < m) {
      const long long at = (long long)pos[i0 + t];
      if (at >= 0 && at < rows) p[t] = at;
      else if (tid == 0) *error = 1;
    }
    p_max = max(p_max, p[t]);
  }
  for (int c = tid; c < NH * D; c += THREADS) {
    const int j = c / D, t = j / HEADS, h = j % HEADS;
    qs[j][c % D] = i0 + t < m ? q[(long long)(i0 + t) * q_stride + (long long)(h0 + h) * D + c % D] * scale : 0.0f;
  }
  const long long r_begin = (long long)split * SPLIT_ROWS, r_end = min(r_begin + SPLIT_ROWS, p_max + 1);
#if APPEND
  // One query (a decode step) whose key and value rows this step writes at its position: the blocks
  // read them from shared memory, rounded as the cache holds them, and the first block of the KV group
  // whose rows include the position writes them to the caches (nothing reads that row there during
  // the launch).
  __shared__ float k_new[D], v_new[DV];
  const long long p_new = p[0];
  if (p_new >= 0) {
    const float* kn = new_k + (long long)g * D;
    const float* vn = new_v + (long long)g * DV;
    for (int c = tid; c < D; c += THREADS) k_new[c] = as_cached(kn[c]);
    for (int c = tid; c < DV; c += THREADS) v_new[c] = as_cached(vn[c]);
    if (h0 % (hq / hk) == 0 && p_new >= r_begin && p_new < r_begin + SPLIT_ROWS) {
      for (int c = tid; c < D; c += THREADS) store_kv(kn[c], k_write + (p_new * hk + g) * D + c);
      for (int c = tid; c < DV; c += THREADS) store_kv(vn[c], v_write + (p_new * hk + g) * DV + c);
    }
  }
#endif
  __syncthreads();
  float acc[NH][PER_LANE];
  float run_max[NH], run_sum[NH];
#pragma unroll
  for (int j = 0; j < NH; ++j) {
    run_max[j] = NEG_INF;
    run_sum[j] = 0.0f;
    for (int u = 0; u < PER_LANE; ++u) acc[j][u] = 0.0f;
  }
  for (long long c0 = r_begin; c0 < r_end; c0 += CHUNK) {
    const int len = (int)min((long long)CHUNK, r_end - c0);
    float mx[NH];
#pragma unroll
    for (int j = 0; j < NH; ++j) mx[j] = NEG_INF;
    for (int t = tid; t < len; t += THREADS) {
      float sc[NH];
#if APPEND
      if (c0 + t == p_new) {
        scores_of_new(qs, k_new, sc);
      } else {
        scores(qs, k + ((c0 + t) * hk + g) * D, sc);
      }
#else
      scores(qs, k + ((c0 + t) * hk + g) * D, sc);
#endif
#pragma unroll
      for (int j = 0; j < NH; ++j) {
        // Rows past the query's position are masked; a query with no rows gets a finite floor, so that
        // its (unwritten) sums stay free of NaN.
        const long long last = p[j / HEADS];
        const float value = c0 + t <= last ? sc[j] : (last < 0 ? -1e30f : NEG_INF);
        ps[j][t] = value;
        mx[j] = fmaxf(mx[j], value);
      }
    }
    block_reduce(mx, red, true);
    float correction[NH], sum[NH];
#pragma unroll
    for (int j = 0; j < NH; ++j) {
      mx[j] = fmaxf(run_max[j], mx[j]);
      correction[j] = expf(run_max[j] - mx[j]);  // 0 on the first chunk
      run_max[j] = mx[j];
      sum[j] = 0.0f;
    }
    for (int t = tid; t < len; t += THREADS) {
#pragma unroll
      for (int j = 0; j < NH; ++j) {
        const float e = expf(ps[j][t] - mx[j]);
        ps[j][t] = e;
        sum[j] += e;
      }
    }
    block_reduce(sum, red, false);  // also publishes ps
#pragma unroll
    for (int j = 0; j < NH; ++j) {
      run_sum[j] = run_sum[j] * correction[j] + sum[j];
      for (int u = 0; u < PER_LANE; ++u) acc[j][u] *= correction[j];
    }
    for (int t = warp; t < len; t += WARPS) {
      const KV_T* vr = v + ((c0 + t) * hk + g) * DV;
#if APPEND
      const bool fresh = c0 + t == p_new;
#endif
#pragma unroll
      for (int u = 0; u < PER_LANE; ++u) {
        const int c = lane + 32 * u;
        if (c < DV) {
#if APPEND
          const float value = fresh ? v_new[c] : widen(vr[c]);
#else
          const float value = widen(vr[c]);
#endif
#pragma unroll
          for (int j = 0; j < NH; ++j) acc[j][u] += ps[j][t] * value;
        }
      }
    }
    __syncthreads();  // ps is rewritten by the next chunk
  }
  // The warps' partial sums, one query at a time in the scores' memory (WARPS * HEADS * DV <= 4096).
  float* partial = &ps[0][0];
#pragma unroll
  for (int t = 0; t < QT; ++t) {
#pragma unroll
    for (int h = 0; h < HEADS; ++h) {
      for (int u = 0; u < PER_LANE; ++u) {
        const int c = lane + 32 * u;
        if (c < DV) partial[(warp * HEADS + h) * DV + c] = acc[t * HEADS + h][u];
      }
    }
    __syncthreads();
#if SPLITS > 1
    // One query (QT is 1): this split's maximum, sum and weighted values go to its slot of partials;
    // the block that arrives last combines the slots in split order (a result that does not depend on
    // which block finishes first) and leaves the counter at zero for the next run.
    float* mine = partials + ((long long)unit * SPLITS + split) * HEADS * (DV + 2);
    for (int c = tid; c < HEADS * DV; c += THREADS) {
      const int h = c / DV;
      float total = 0.0f;
      for (int w = 0; w < WARPS; ++w) total += partial[(w * HEADS + h) * DV + (c % DV)];
      mine[h * (DV + 2) + c % DV] = total;
    }
    if (tid < HEADS) {
      mine[tid * (DV + 2) + DV] = run_max[tid];
      mine[tid * (DV + 2) + DV + 1] = run_sum[tid];
    }
    __threadfence();
    __syncthreads();
    __shared__ bool last_block;
    if (tid == 0) last_block = atomicAdd(counters + unit, 1u) == SPLITS - 1;
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    const float* all = partials + (long long)unit * SPLITS * HEADS * (DV + 2);
    if (i0 < m) {
      float* o = out + ((long long)i0 * hq + h0) * DV;
      for (int c = tid; c < HEADS * DV; c += THREADS) {
        const int h = c / DV;
        float top = NEG_INF;
        for (int sp = 0; sp < SPLITS; ++sp) top = fmaxf(top, __ldcg(all + (sp * HEADS + h) * (DV + 2) + DV));
        float total = 0.0f, weight = 0.0f;
        for (int sp = 0; sp < SPLITS; ++sp) {
          const float* slot = all + (sp * HEADS + h) * (DV + 2);
          const float mx = __ldcg(slot + DV);
          if (mx == NEG_INF) continue;  // a split past the query's position
          const float f = expf(mx - top);
          total += __ldcg(slot + c % DV) * f;
          weight += __ldcg(slot + DV + 1) * f;
        }
        o[c] = p[0] >= 0 ? total / weight : 0.0f;
      }
    }
    if (tid == 0) counters[unit] = 0;
    return;
#else
    if (i0 + t < m) {
      float* o = out + ((long long)(i0 + t) * hq + h0) * DV;
      for (int c = tid; c < HEADS * DV; c += THREADS) {
        const int h = c / DV;
        float total = 0.0f;
        for (int w = 0; w < WARPS; ++w) total += partial[(w * HEADS + h) * DV + (c % DV)];
        o[c] = p[t] >= 0 ? total / run_sum[t * HEADS + h] : 0.0f;
      }
    }
    __syncthreads();  // partial is rewritten for the next query
#endif
  }
}
)CUDA";

// Query heads per block: a divisor of the group size, at most 8, with room for the warps' partial
// sums (8 warps * heads * DV floats in the 4096-float score buffer).
int heads_per_block(int64_t group, int64_t dv) {
  int64_t h = std::min<int64_t>({group, 8, std::max<int64_t>(1, 4096 / (8 * dv))});
  while (group % h != 0) --h;
  return static_cast<int>(h);
}

// Queries per block: one for a decode step; for longer chunks as many as keep the block's (query, head)
// pairs within the registers (16 pairs up to 64 channels, 8 up to 128).
int queries_per_block(int64_t m, int heads, int64_t dv) {
  if (m < 4) return 1;
  const int pairs = dv <= 64 ? 16 : dv <= 128 ? 8 : heads;
  return std::max(1, pairs / heads);
}

bool claim_kv_attention(const ir::Node& node) {
  if (node.inputs().size() != 4 || node.num_outputs() != 1) return false;
  const DType kv = node.input(1).dtype();
  const DType pos = node.input(3).dtype();
  if (node.input(0).dtype() != DType::f32 || (kv != DType::f32 && kv != DType::f16)) return false;
  if (pos != DType::i32 && pos != DType::i64) return false;
  const int64_t d = node.input(0).shape()[2], dv = node.input(2).shape()[2];
  return d > 0 && dv > 0 && d <= kMaxHeadDim && dv <= kMaxHeadDim && node.input(0).shape()[0] > 0;
}

// Scratch of a kernel whose blocks split the cache rows: each block's partial softmax state, and one
// arrival counter per (queries, heads) unit (zero between runs).
struct SplitScratch {
  int64_t partial_floats = 0;
  int64_t counters = 0;
};

// A step that writes the new cache rows itself (common/cache_appends.h): operands 5..8 are the caches
// before the step, and the new key and value rows; the updated caches (operands 1 and 2) start as
// copies of them unless they are the same memory (a cache updated in place).
struct CacheWrites {
  bool on = false;
  int64_t key_bytes = 0, value_bytes = 0;
};

class KvAttentionStep final : public common::Step {
 public:
  // `split` for the CUDA-core kernel (which takes the scratch pointers, null when it does not split);
  // std::nullopt for the tensor-core kernel.
  KvAttentionStep(std::shared_ptr<KernelModule> module, const char* kernel, dim3 grid, dim3 block,
                  std::vector<Operand> operands, int m, int hq, int hk, int64_t rows, float scale, int64_t q_stride,
                  std::string what, std::optional<SplitScratch> split = std::nullopt, CacheWrites writes = {})
      : module_(std::move(module)),
        kernel_(module_->kernel(kernel)),
        grid_(grid),
        block_(block),
        operands_(std::move(operands)),
        m_(m),
        hq_(hq),
        hk_(hk),
        rows_(rows),
        scale_(scale),
        q_stride_(q_stride),
        what_(std::move(what)),
        takes_scratch_(split.has_value()),
        writes_(writes) {
    if (split && split->counters > 0) {
      check(cudaMalloc(&partials_, static_cast<size_t>(split->partial_floats) * sizeof(float)),
            "cudaMalloc (kv_cache_attention split partials)");
      check(cudaMalloc(&counters_, static_cast<size_t>(split->counters) * sizeof(unsigned)),
            "cudaMalloc (kv_cache_attention split counters)");
      check(cudaMemset(counters_, 0, static_cast<size_t>(split->counters) * sizeof(unsigned)),
            "cudaMemset (kv_cache_attention split counters)");
    }
  }
  ~KvAttentionStep() override {
    if (partials_ != nullptr) cudaFree(partials_);
    if (counters_ != nullptr) cudaFree(counters_);
  }
  KvAttentionStep(const KvAttentionStep&) = delete;
  KvAttentionStep& operator=(const KvAttentionStep&) = delete;
  void run(const common::RunContext& ctx) const override {
    void* ptrs[5];
    for (size_t i = 0; i < 5; ++i) ptrs[i] = ctx.ptr<std::byte>(operands_[i]);
    void* flag = index_error_flag(ctx);
    int m = m_, hq = hq_, hk = hk_;
    long long rows = rows_;
    float scale = scale_;
    long long q_stride = q_stride_;
    void* partials = partials_;
    void* counters = counters_;
    const void *new_k = nullptr, *new_v = nullptr;
    void *k_write = nullptr, *v_write = nullptr;
    if (writes_.on) {
      const cudaStream_t stream = stream_of(ctx);
      copy_unless_same(ctx.ptr<const std::byte>(operands_[5]), ptrs[1], writes_.key_bytes, stream);
      copy_unless_same(ctx.ptr<const std::byte>(operands_[6]), ptrs[2], writes_.value_bytes, stream);
      new_k = ctx.ptr<const std::byte>(operands_[7]);
      new_v = ctx.ptr<const std::byte>(operands_[8]);
      k_write = ptrs[1];
      v_write = ptrs[2];
    }
    void* params[] = {&ptrs[0], &ptrs[1], &ptrs[2], &ptrs[3], &ptrs[4], &flag,  &m,     &hq,      &hk,
                      &rows,    &scale,   &q_stride, &partials, &counters, &new_k, &new_v, &k_write, &v_write};
    static_assert(sizeof(params) / sizeof(params[0]) == 18);
    if (!takes_scratch_) params[12] = params[13] = nullptr;  // the tensor-core kernel has 12 parameters
    launch_kernel(reinterpret_cast<const void*>(kernel_), grid_, block_, params, 0, stream_of(ctx),
                  "cudaLaunchKernel (kv_cache_attention)");
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return "cuda " + what_; }

 private:
  static void copy_unless_same(const std::byte* from, void* to, int64_t bytes, cudaStream_t stream) {
    if (from == to) return;
    check(cudaMemcpyAsync(to, from, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync (kv_cache_attention cache copy)");
  }

  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_;
  dim3 grid_, block_;
  std::vector<Operand> operands_;
  int m_, hq_, hk_;
  int64_t rows_;
  float scale_;
  int64_t q_stride_;  // elements from one query's row to the next
  std::string what_;
  bool takes_scratch_ = false;
  CacheWrites writes_;
  void* partials_ = nullptr;
  void* counters_ = nullptr;
};

// Blocks that split one query's cache rows: enough for about two blocks per multiprocessor over all
// (query, heads) units, each split at least kMinSplitRows long (a decode step of 8 KV groups over
// 2,049 rows ran 8 blocks for 87 us a layer on an H200). Only one query per block splits.
constexpr int64_t kMinSplitRows = 128;
int row_splits(int64_t rows, int64_t units, int queries, int multiprocessors) {
  if (queries != 1) return 1;
  const int64_t by_rows = (rows + kMinSplitRows - 1) / kMinSplitRows;
  const int64_t by_machine = std::max<int64_t>(1, 2 * int64_t{multiprocessors} / std::max<int64_t>(1, units));
  return static_cast<int>(std::clamp<int64_t>(std::min(by_rows, by_machine), 1, 64));
}

bool lower_kv_attention(Lowering& L, const ir::NodePtr& node) {
  if (!claim_kv_attention(*node)) return false;
  // The cache writes this step takes over (common/cache_appends.h), unless they were lowered on their own.
  const bool append = L.cache_append(*node) != nullptr && !L.has(node->input(1));
  const Shape &qs = node->input(0).shape(), &ks = node->input(1).shape(), &vs = node->input(2).shape();
  // Queries may be a view whose rows lie apart (the query heads of a stacked q/k projection): the
  // kernels take the row stride instead of a packed copy when each row's heads are contiguous.
  std::vector<int32_t> reads, writes;
  const int32_t q_value = L.value(node->input(0));
  const common::Layout& q_layout = L.info(q_value).layout;
  const bool strided_rows = qs[0] > 1 && (qs[1] == 1 || q_layout.strides[1] == qs[2]) &&
                            (qs[2] == 1 || q_layout.strides[2] == 1) && q_layout.strides[0] >= qs[1] * qs[2];
  const int32_t q = strided_rows ? q_value : L.packed(q_value);
  const int64_t q_stride = strided_rows ? q_layout.strides[0] : qs[1] * qs[2];
  // Operands: q, the caches the attention reads, positions, the output; when appending, then the
  // caches before the step and the new rows.
  std::vector<int32_t> ids;
  if (append) {
    const ir::Node &keys = *node->input(1).node(), &values = *node->input(2).node();
    const int32_t old_k = L.packed(L.value(keys.input(0))), old_v = L.packed(L.value(values.input(0)));
    const int32_t pos = L.packed(L.value(node->input(3)));
    const int32_t new_k = L.packed(L.value(keys.input(2))), new_v = L.packed(L.value(values.input(2)));
    const int32_t k_out = L.produce(node->input(1)), v_out = L.produce(node->input(2));
    reads = {q, old_k, old_v, pos, new_k, new_v};
    // The updated caches take the old ones' memory where they may (a cache updated in place).
    L.allow_in_place(k_out, old_k, reads);
    L.allow_in_place(v_out, old_v, reads);
    writes = {k_out, v_out};
    ids = {q, k_out, v_out, pos, -1, old_k, old_v, new_k, new_v};
  } else {
    ids = {q, L.packed(L.value(node->input(1))), L.packed(L.value(node->input(2))), L.packed(L.value(node->input(3))), -1};
    reads = {ids[0], ids[1], ids[2], ids[3]};
  }
  const int32_t out = L.produce(ir::Value(node, 0));
  ids[4] = out;
  writes.insert(writes.begin(), out);
  const double attr = node->attrs().get_float("scale");
  const double scale = attr > 0 ? attr : 1.0 / std::sqrt(static_cast<double>(qs[2]));
  const bool f16 = node->input(1).dtype() == DType::f16;
  // 16-byte key loads need rows that start at 16-byte boundaries: D a multiple of 8 and aligned bases.
  bool vector_rows = qs[2] % 8 == 0;
  for (int32_t id : ids) vector_rows = vector_rows && L.operand(id).byte_offset % 16 == 0;
  const DType pos = node->input(3).dtype();
  Context& ctx = lowering_context();
  std::vector<Operand> operands;
  for (int32_t id : ids) operands.push_back(L.operand(id));
  const int m = static_cast<int>(qs[0]), hq = static_cast<int>(qs[1]), hk = static_cast<int>(ks[1]);
  const std::string types =
      fmt::format("{} over {}", ir::type_str(node->input(0).type()), ir::type_str(node->input(1).type()));
  if (!append && flash_attention_fits(*node, ctx.device().compute_capability())) {
    const FlashAttentionKernel k = flash_attention_kernel(qs[2], vs[2], node->input(1).dtype(), pos, vector_rows, m, hq, hk);
    L.emit(std::make_unique<KvAttentionStep>(ctx.compiler().module(k.source, "kv_cache_attention tensor-core kernel"),
                                             "tsr_flash_attention", k.grid, k.block, std::move(operands), m, hq, hk,
                                             ks[0], static_cast<float>(scale), q_stride,
                                             "kv_cache_attention (tensor cores) " + types),
           reads, writes);
    return true;
  }
  const int heads = heads_per_block(qs[1] / ks[1], vs[2]);
  const int queries = queries_per_block(qs[0], heads, vs[2]);
  const int tiles = (m + queries - 1) / queries;
  const int64_t units = int64_t{tiles} * (hq / heads);
  const int splits = row_splits(ks[0], units, queries, ctx.multiprocessors());
  const int64_t split_rows = (ks[0] + splits - 1) / splits;
  const std::string src =
      fmt::format("#define THREADS {}\n#define HEADS {}\n#define QT {}\n#define VEC {}\n#define D {}\n#define DV {}\n"
                  "#define KV_T {}\n#define POS_T {}\n#define SPLITS {}\n#define SPLIT_ROWS {}LL\n#define APPEND {}\n",
                  kThreads, heads, queries, vector_rows ? 1 : 0, qs[2], vs[2], f16 ? "__half" : "float",
                  pos == DType::i32 ? "int" : "long long", splits, std::max<int64_t>(split_rows, 1), append ? 1 : 0) +
      kSource;
  SplitScratch scratch;
  if (splits > 1) scratch = {units * splits * heads * (vs[2] + 2), units};
  CacheWrites cache_writes;
  if (append) {
    cache_writes = {true, ks[0] * ks[1] * ks[2] * static_cast<int64_t>(dtype_size(node->input(1).dtype())),
                    vs[0] * vs[1] * vs[2] * static_cast<int64_t>(dtype_size(node->input(2).dtype()))};
  }
  L.emit(std::make_unique<KvAttentionStep>(ctx.compiler().module(src, "kv_cache_attention kernel"), "tsr_kv_attention",
                                           dim3(static_cast<unsigned>(units * splits)), dim3(kThreads),
                                           std::move(operands), m, hq, hk, ks[0], static_cast<float>(scale),
                                           q_stride,
                                           fmt::format("kv_cache_attention {}{}{}", types,
                                                       splits > 1 ? fmt::format(" ({} row splits)", splits) : "",
                                                       append ? " writing the new cache rows" : ""),
                                           scratch, cache_writes),
         reads, writes);
  return true;
}

}  // namespace

bool folds_cache_writes(const ir::Node& attention) { return claim_kv_attention(attention); }

void register_attention_lowerings(common::LoweringTable& table) {
  table["kv_cache_attention"] = {lower_kv_attention, claim_kv_attention, true};
}

}  // namespace tessera::backends::cuda
