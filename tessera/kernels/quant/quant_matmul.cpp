// The quantized matmul driver: quantize the activation rows, then split the weight rows over the
// thread pool. Each task walks its weight rows in tiles of kRowTile (decode: at least kDecodeTileBytes
// of each stripe); within a tile every group of four activation rows is dotted with each weight row,
// so a tile of weights and a group of activations stay in cache while they are reused.
#include "tessera/kernels/quant/quant_matmul.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/x86_kernels.h"
#include "tessera/kernels/quant/dot.h"
#include "tessera/kernels/quant/f16_gemm.h"
#include "tessera/kernels/quant/interleave_x8.h"
#include "tessera/quant/blocks.h"
#include "tessera/quant/quantize.h"
#include "tessera/runtime/thread_scratch.h"

namespace tessera::kernels::quant {

namespace {

using tessera::quant::BlockQ8_K;
using tessera::quant::row_bytes;
using tessera::quant::type_name;

constexpr int64_t kRowTile = 16;
constexpr int64_t kDecodeTileBytes = int64_t{64} << 10;

// Quantizes the m activation rows (out_row bytes apart) with their blocks' scales and scaled code
// sums (nb per row).
void quantize_activations(GgmlType act_type, const float* x, int64_t m, int64_t k, uint8_t* out, int64_t out_row,
                          int64_t nb, float* scales, float* sums, runtime::ThreadPool& pool) {
  pool.parallel_for(m, 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      quantize_activations_with_scales(act_type, x + i * k, out + i * out_row, k, scales + i * nb, sums + i * nb);
    }
  });
}

// Per activation row and Q8_K block, the code sums of its eight groups of 32 as four int32, each two
// int16 (groups 2t and 2t+1): what the Q4_K x8 kernels multiply with the eight rows' mins.
void q8_k_group_sums(const uint8_t* act, int64_t m, int64_t nb, int64_t a_row, int32_t* out) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* bsums = act + i * a_row + b * sizeof(BlockQ8_K) + offsetof(BlockQ8_K, bsums);
      for (int t = 0; t < 4; ++t) {
        int32_t g[2];
        for (int h = 0; h < 2; ++h) {
          const int j = 2 * (2 * t + h);
          g[h] = load_as<int16_t>(bsums + 2 * j) + load_as<int16_t>(bsums + 2 * j + 2);
        }
        out[(i * nb + b) * 4 + t] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(g[0])) |
                                                         static_cast<uint32_t>(static_cast<uint16_t>(g[1])) << 16);
      }
    }
  }
}

// Hands out ranges of `total` items to the threads of one call: a share of what is left each time
// (long stretches first, for the prefetchers), shrinking to min_chunk at the end so that the threads
// finish together; fixed tiles can leave one thread a whole tile behind the other. With threads = 0,
// every range is min_chunk long.
class GuidedRanges {
 public:
  GuidedRanges(int64_t total, int64_t min_chunk, int threads)
      : total_(total), min_chunk_(std::max<int64_t>(1, min_chunk)), share_(2 * std::max(0, threads)) {}
  bool next(int64_t* begin, int64_t* end) {
    int64_t start = next_.load(std::memory_order_relaxed);
    while (start < total_) {
      const int64_t size = share_ > 0 ? std::max(min_chunk_, (total_ - start) / share_) : min_chunk_;
      if (next_.compare_exchange_weak(start, start + size, std::memory_order_relaxed)) {
        *begin = start;
        *end = std::min(total_, start + size);
        return true;
      }
    }
    return false;
  }

 private:
  const int64_t total_, min_chunk_, share_;
  std::atomic<int64_t> next_{0};
};

// A product with no rows, no columns or nothing to sum: y is empty or all zeros. True if handled.
bool trivial_product(int64_t m, int64_t n, int64_t k, float* y) {
  if (m == 0 || n == 0) return true;
  if (k > 0) return false;
  std::fill(y, y + m * n, 0.0f);
  return true;
}

// Quantized activations with their decoded scales, in the calling thread's scratch.
struct Activations {
  int64_t row_bytes, nb;
  uint8_t* data;
  float *scales, *sums;
  ActRows rows(int64_t first, int count) const {
    return {data + first * row_bytes, static_cast<size_t>(row_bytes), scales + first * nb, sums + first * nb, count};
  }
};

Activations quantize_for(GgmlType type, const float* x, int64_t m, int64_t k, runtime::ThreadPool& pool) {
  using runtime::ScratchSlot;
  const GgmlType act_type = activation_type(type);
  Activations a;
  a.row_bytes = row_bytes(act_type, k, "quantized_matmul activations");
  a.nb = k / type_traits(type).block_size;
  a.data = runtime::thread_scratch_of<uint8_t>(ScratchSlot::quant_activations, static_cast<size_t>(m * a.row_bytes));
  a.scales = runtime::thread_scratch_of<float>(ScratchSlot::quant_scales, static_cast<size_t>(m * a.nb));
  a.sums = runtime::thread_scratch_of<float>(ScratchSlot::quant_sums, static_cast<size_t>(m * a.nb));
  quantize_activations(act_type, x, m, k, a.data, a.row_bytes, a.nb, a.scales, a.sums, pool);
  return a;
}

}  // namespace

GgmlType activation_type(GgmlType type) {
  switch (type) {
    case GgmlType::q4_0:
    case GgmlType::q5_0:
    case GgmlType::q8_0:
      return GgmlType::q8_0;
    case GgmlType::q4_1:
    case GgmlType::q5_1:
      return GgmlType::q8_1;
    case GgmlType::q2_k:
    case GgmlType::q3_k:
    case GgmlType::q4_k:
    case GgmlType::q5_k:
    case GgmlType::q6_k:
      return GgmlType::q8_k;
    case GgmlType::f32:
    case GgmlType::f16:
    case GgmlType::bf16:
      return GgmlType::f32;
    default:
      fail("quantized_matmul: no CPU kernel for {} weights", type_name(type));
  }
}

bool has_kernel(GgmlType type) {
  return portable_dot(type) != nullptr;
}

bool has_avx2_kernel(GgmlType type) {
  return avx2_dot(type) != nullptr;
}

void quantized_matmul(GgmlType type, const void* w, int64_t n, int64_t k, const float* x, int64_t m, float* y,
                      runtime::ThreadPool* pool) {
  TESSERA_CHECK(n >= 0 && k >= 0 && m >= 0, "quantized_matmul: negative size (m {}, n {}, k {})", m, n, k);
  TESSERA_CHECK(has_kernel(type), "quantized_matmul: no CPU kernel for {} weights", type_name(type));
  const int64_t w_row = row_bytes(type, k, "quantized_matmul weights");
  if (trivial_product(m, n, k, y)) return;
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
#if TESSERA_X86_KERNELS
  if (type == GgmlType::f16 && f16_gemm_applies(m)) {
    f16_gemm(static_cast<const uint16_t*>(w), n, k, x, m, y, tp);
    return;
  }
#endif
  // The quantized activations live in this thread's scratch, reused across calls.
  const Activations acts = quantize_for(type, x, m, k, tp);
  const int64_t nb = acts.nb;

  DotFn dot = use_avx512_vnni() ? vnni_dot(type) : nullptr;
  if (dot == nullptr && use_avx512()) dot = avx512_float_dot(type);
  if (dot == nullptr && use_avx2()) dot = avx2_dot(type);
  if (dot == nullptr) dot = portable_dot(type);
  const auto* wbytes = static_cast<const uint8_t*>(w);
  // Tiles of weight rows are handed out dynamically: on a shared machine one core may be slowed by
  // other work, and a static half-and-half split would leave the other waiting. A single activation
  // row (decode) is dotted with kDecodeRows (four) weight rows from distant stripes at once: four memory
  // streams per core keep enough reads in flight to approach the machine's bandwidth, where one
  // stream reaches little more than half of it.
  const bool stripes = m == 1 && n >= kDecodeRows * kRowTile;
  const uint8_t* q4_pairs = nullptr;
  if (stripes && type == GgmlType::q4_0 && dot != portable_dot(type)) {
    auto* pairs = runtime::thread_scratch_of<uint8_t>(runtime::ScratchSlot::quant_q4_pairs,
                                                      static_cast<size_t>(std::max<int64_t>(nb / 2 * kQ4PairBytes, 1)));
    layout_q4_0_pairs(acts.data, nb, pairs);
    q4_pairs = pairs;
  }
  const int64_t stripe = stripes ? n / kDecodeRows : n;  // rows per stripe; rows past kDecodeRows * stripe go alone
  // A decode tile covers at least 64 KiB of each stripe: every switch to a new tile makes the hardware
  // prefetcher find the stripes again, and with 16 rows of 1 KiB that cost a tenth of the bandwidth.
  const int64_t row_tile = stripes ? std::max<int64_t>(kRowTile, kDecodeTileBytes / w_row) : kRowTile;
  const int64_t main_tiles = (stripe + row_tile - 1) / row_tile;
  const int64_t rest = stripes ? n - kDecodeRows * stripe : 0;
  const int64_t tiles = main_tiles + (rest > 0 ? 1 : 0);
  // Small products are not worth waking the pool: at least ~64 KiB of weights per worker.
  const int64_t bytes = n * w_row * std::min<int64_t>(m, kMaxRows);
  const int64_t workers = std::clamp<int64_t>(bytes / (64 << 10), 1, std::min<int64_t>(tiles, tp.size()));
  std::atomic<int64_t> next_tile{0};
  tp.parallel_for(workers, 1, [&](int64_t, int64_t) {
    float out[std::max(kMaxRows * kMaxRows, kDecodeRows)];
    for (int64_t t = next_tile.fetch_add(1); t < tiles; t = next_tile.fetch_add(1)) {
      if (t == main_tiles) {  // the rows left over after the stripes
        const ActRows one = acts.rows(0, 1);
        for (int64_t j = kDecodeRows * stripe; j < n; ++j) {
          const uint8_t* wj = wbytes + j * w_row;
          dot(nb, &wj, 1, one, out);
          y[j] = out[0];
        }
        continue;
      }
      const int64_t j0 = t * row_tile, j1 = std::min(stripe, j0 + row_tile);
      if (stripes) {
        ActRows one = acts.rows(0, 1);
        one.q4_pairs = q4_pairs;
        for (int64_t j = j0; j < j1; ++j) {
          const uint8_t* wj[kDecodeRows];
          for (int s = 0; s < kDecodeRows; ++s) wj[s] = wbytes + (j + s * stripe) * w_row;
          dot(nb, wj, kDecodeRows, one, out);
          for (int s = 0; s < kDecodeRows; ++s) y[j + s * stripe] = out[s];
        }
        continue;
      }
      for (int64_t i = 0; i < m; i += kMaxRows) {
        const int rows = static_cast<int>(std::min<int64_t>(kMaxRows, m - i));
        const ActRows rows_i = acts.rows(i, rows);
        for (int64_t j = j0; j < j1; ++j) {
          const uint8_t* wj = wbytes + j * w_row;
          dot(nb, &wj, 1, rows_i, out);
          for (int r = 0; r < rows; ++r) y[(i + r) * n + j] = out[r];
        }
      }
    }
  });
}

void quantized_matmul_x8(GgmlType type, const void* w_x8, int64_t n, int64_t k, const float* x, int64_t m, float* y,
                         runtime::ThreadPool* pool) {
  TESSERA_CHECK(n >= 0 && k >= 0 && m >= 0, "quantized_matmul_x8: negative size (m {}, n {}, k {})", m, n, k);
  TESSERA_CHECK(x8_layout_exists(type) && n % kX8Rows == 0,
                "quantized_matmul_x8: needs Q4_0, Q8_0 or Q4_K weights in rows of eight, got {} with {} rows",
                type_name(type), n);
  const int64_t w_row = row_bytes(type, k, "quantized_matmul_x8 weights");
  if (trivial_product(m, n, k, y)) return;
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const Activations acts = quantize_for(type, x, m, k, tp);
  const int64_t nb = acts.nb;
  int32_t* group_sums = nullptr;
  if (type == GgmlType::q4_k) {
    group_sums =
        runtime::thread_scratch_of<int32_t>(runtime::ScratchSlot::quant_group_sums, static_cast<size_t>(m * nb * 4));
    q8_k_group_sums(acts.data, m, nb, acts.row_bytes, group_sums);
  }
  DotX8Fn x8_dot[kMaxRows + 1] = {};
  DotX8Fn x8_decode = nullptr, x8_pair = nullptr;
  if (use_avx2()) {
    // The VNNI form where the CPU has one for this type, else AVX2's.
    const bool vnni = use_avx512_vnni();
    const auto best = [&](int rows, int groups) {
      DotX8Fn f = vnni ? vnni_dot_x8(type, rows, groups) : nullptr;
      return f != nullptr ? f : avx2_dot_x8(type, rows, groups);
    };
    for (int r = 1; r <= kMaxRows; ++r) x8_dot[r] = best(r, 1);
    x8_decode = best(1, kX8DecodeGroups);
    x8_pair = best(kMaxRows, kX8PrefillGroups);
  }
  const DotFn row_dot = portable_dot(type);  // CPUs without AVX2: the group turned back into rows
  const auto* wbytes = static_cast<const uint8_t*>(w_x8);
  const int64_t group_bytes = kX8Rows * w_row, groups = n / kX8Rows;
  // `count` neighbouring groups from g (one, or kX8PrefillGroups through x8_pair) with `rows` activation
  // rows from row i, into y.
  auto groups_at = [&](int64_t g, int count, int64_t i, int rows, float* out) {
    const ActRows act = acts.rows(i, rows);
    const int32_t* sums = group_sums != nullptr ? group_sums + i * nb * 4 : nullptr;
    const uint8_t* set[kX8PrefillGroups];
    for (int s = 0; s < count; ++s) set[s] = wbytes + (g + s) * group_bytes;
    if (count > 1) {
      x8_pair(nb, set, act, sums, out);
    } else if (x8_dot[rows] != nullptr) {
      x8_dot[rows](nb, set, act, sums, out);
    } else {
      auto* plain =
          runtime::thread_scratch_of<uint8_t>(runtime::ScratchSlot::quant_x8_rows, static_cast<size_t>(group_bytes));
      deinterleave_x8(type, set[0], kX8Rows, k, plain);
      float one[kMaxRows];
      for (int j = 0; j < kX8Rows; ++j) {
        const uint8_t* wj = plain + j * w_row;
        row_dot(nb, &wj, 1, act, one);
        for (int r = 0; r < rows; ++r) out[r * kX8Rows + j] = one[r];
      }
    }
    for (int s = 0; s < count; ++s) {
      for (int r = 0; r < rows; ++r) {
        std::memcpy(y + (i + r) * n + (g + s) * kX8Rows, out + (s * rows + r) * kX8Rows, sizeof(float) * kX8Rows);
      }
    }
  };
  // Work items: decode dots kX8DecodeGroups groups from distant stripes at once (that many memory
  // streams per core), handed out in guided ranges; groups past the stripes go one by one. Prefill
  // takes tiles of kX8PrefillGroups groups, dotted together, which stay in L2 while every activation
  // row passes over them.
  const int64_t tile = m == 1 ? std::max<int64_t>(1, kDecodeTileBytes / group_bytes) : kX8PrefillGroups;
  const bool stripes = m == 1 && x8_decode != nullptr && groups >= kX8DecodeGroups * tile;
  const int64_t stripe = stripes ? groups / kX8DecodeGroups : groups;  // groups per stripe
  const int64_t items = stripe + (stripes ? groups - kX8DecodeGroups * stripe : 0);
  const int64_t bytes = n * w_row * std::min<int64_t>(m, kMaxRows);
  const int64_t workers =
      std::clamp<int64_t>(bytes / (64 << 10), 1, std::min<int64_t>((items + tile - 1) / tile, tp.size()));
  GuidedRanges ranges(items, tile, m == 1 ? static_cast<int>(workers) : 0);
  tp.parallel_for(workers, 1, [&](int64_t, int64_t) {
    float out[kMaxRows * kX8Rows * std::max(kX8DecodeGroups, kX8PrefillGroups)];
    int64_t j0 = 0, j1 = 0;
    while (ranges.next(&j0, &j1)) {
      for (int64_t i = 0; i < m; i += kMaxRows) {
        const int rows = static_cast<int>(std::min<int64_t>(kMaxRows, m - i));
        for (int64_t j = j0; j < j1; ++j) {
          if (!stripes) {
            const bool together = rows == kMaxRows && x8_pair != nullptr && j + kX8PrefillGroups <= j1;
            const int count = together ? kX8PrefillGroups : 1;
            groups_at(j, count, i, rows, out);
            j += count - 1;
          } else if (j >= stripe) {
            groups_at(kX8DecodeGroups * stripe + (j - stripe), 1, 0, 1, out);
          } else {
            const uint8_t* set[kX8DecodeGroups];
            for (int s = 0; s < kX8DecodeGroups; ++s) set[s] = wbytes + (j + s * stripe) * group_bytes;
            x8_decode(nb, set, acts.rows(0, 1), group_sums, out);
            for (int s = 0; s < kX8DecodeGroups; ++s) {
              std::memcpy(y + (j + s * stripe) * kX8Rows, out + s * kX8Rows, sizeof(float) * kX8Rows);
            }
          }
        }
      }
    }
  });
}

}  // namespace tessera::kernels::quant
