// F16-weight products with many activation rows (prefill) as a packed SGEMM. The activations are
// packed once into row panels; each thread then takes strips of nr weight rows, widens a strip's
// k block to an f32 panel that stays in L1 (pack_f16_panel) and runs the register tile over every
// activation panel. A weight is converted once per call instead of once per four activation rows,
// and the tile does 24 FMAs per two loads where the row dot products did one FMA per load.
#include "tessera/kernels/cpu/x86_kernels.h"

#if TESSERA_X86_KERNELS  // x86 only: without it, use_avx2() is false and nothing calls these
#include <immintrin.h>

#include "tessera/kernels/quant/f16_gemm.h"

#include <algorithm>
#include <atomic>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/runtime/thread_scratch.h"

namespace tessera::kernels::quant {

namespace {

// Depth of one panel: 256 k positions of 32 widened rows are 32 KiB, within L1 beside the
// activation panel's 12 KiB.
constexpr int64_t kKC = 256;
// Below this many activation rows the row dot products win: packing transposes every weight, and
// with few rows there is little reuse to pay for it.
constexpr int64_t kMinRows = 5;
// Most activation rows one pass packs (a multiple of both tiles' 12 and 6 rows): 384 x 8192 floats are
// 12 MiB of scratch per thread, and each weight is widened once per 384 rows of FMAs.
constexpr int64_t kChunkRows = 384;

F16Tile tile_for_cpu() {
  return use_avx512() ? avx512_f16_tile() : avx2_f16_tile();
}

// x[m, k] in blocks of depth kc_step: the block at pc starts at pc * m_pad floats, its panel q
// (rows q * mr ...) at q * mr * kc further, element (p, r) at p * mr + r; rows past m are zero.
void pack_activations(const float* x, int64_t m, int64_t k, int64_t kc_step, int64_t mr, float* dst,
                      runtime::ThreadPool& pool) {
  const int64_t panels = (m + mr - 1) / mr, m_pad = panels * mr;
  pool.parallel_for(panels, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t rows = std::min(mr, m - q * mr);
      for (int64_t pc = 0; pc < k; pc += kc_step) {
        const int64_t kc = std::min(kc_step, k - pc);
        float* panel = dst + pc * m_pad + q * mr * kc;
        for (int64_t r = 0; r < mr; ++r) {
          const float* src = x + (q * mr + r) * k + pc;
          if (r < rows) {
            for (int64_t p = 0; p < kc; ++p) panel[p * mr + r] = src[p];
          } else {
            for (int64_t p = 0; p < kc; ++p) panel[p * mr + r] = 0.0f;
          }
        }
      }
    }
  });
}

// The product for m rows of x (one chunk).
void gemm_rows(const F16Tile& t, const uint16_t* w, int64_t n, int64_t k, const float* x, int64_t m, float* y,
               runtime::ThreadPool& pool) {
  // Equal k blocks (2048 = 8 x 256; 2100 = 9 x 234, not 8 x 256 + 52): a short block runs the tile
  // mostly on loading and storing y.
  const int64_t blocks = (k + kKC - 1) / kKC, kc_step = (k + blocks - 1) / blocks;
  const int64_t panels = (m + t.mr - 1) / t.mr, m_pad = panels * t.mr;
  float* xa = runtime::thread_scratch_of<float>(runtime::ScratchSlot::quant_f16_acts, static_cast<size_t>(m_pad * k));
  pack_activations(x, m, k, kc_step, t.mr, xa, pool);
  // Strips are handed out one at a time: on a shared machine one core may be slowed by other work.
  const int64_t strips = (n + t.nr - 1) / t.nr;
  std::atomic<int64_t> next{0};
  pool.parallel_for(std::min<int64_t>(strips, pool.size()), 1, [&](int64_t, int64_t) {
    float* panel = runtime::thread_scratch_of<float>(runtime::ScratchSlot::quant_f16_panel,
                                                     static_cast<size_t>(kc_step * t.nr));
    for (int64_t s = next.fetch_add(1); s < strips; s = next.fetch_add(1)) {
      const int64_t j0 = s * t.nr, cols = std::min(t.nr, n - j0);
      for (int64_t pc = 0; pc < k; pc += kc_step) {
        const int64_t kc = std::min(kc_step, k - pc);
        pack_f16_panel(w + j0 * k + pc, k, cols, kc, t.nr, panel);
        const float* xb = xa + pc * m_pad;
        for (int64_t q = 0; q < panels; ++q) {
          t.run(kc, xb + q * t.mr * kc, panel, y + q * t.mr * n + j0, n, std::min(t.mr, m - q * t.mr), cols, pc > 0);
        }
      }
    }
  });
}

}  // namespace

bool f16_gemm_applies(int64_t m) {
  return m >= kMinRows && use_avx2();
}

void f16_gemm(const uint16_t* w, int64_t n, int64_t k, const float* x, int64_t m, float* y,
              runtime::ThreadPool& pool) {
  const F16Tile t = tile_for_cpu();
  // Long prompts go in equal chunks of at most kChunkRows rows, so the packed activations (chunk x k
  // floats) stay a bounded scratch; each chunk widens the weights again, little beside its FMAs.
  const int64_t chunks = (m + kChunkRows - 1) / kChunkRows;
  const int64_t chunk = ((m + chunks - 1) / chunks + t.mr - 1) / t.mr * t.mr;
  for (int64_t i0 = 0; i0 < m; i0 += chunk) {
    gemm_rows(t, w, n, k, x + i0 * k, std::min(chunk, m - i0), y + i0 * n, pool);
  }
}

}  // namespace tessera::kernels::quant

#endif  // TESSERA_X86_KERNELS
