// Tessera's packed SGEMM driver (the BLIS loop nest): NC columns of B -> KC deep -> MC rows of A
// -> NR x MR register tiles. Threads get disjoint 2-D regions of C and pack their own panels into
// per-thread scratch buffers, so steady-state calls allocate nothing.
#include <algorithm>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/gemm_internal.h"
#include "tessera/kernels/cpu/x86_kernels.h"
#include "tessera/runtime/thread_scratch.h"

namespace tessera::kernels::gemm_detail {
namespace {

// Per-thread packing panels at their largest block size, from the thread's scratch (reserved on every
// pool thread by compiled executables, so steady-state calls allocate nothing).
float* pack_buffer_a() {
  return runtime::thread_scratch_of<float>(runtime::ScratchSlot::gemm_pack_a, kMC * kKC + kPackSlack);
}
float* pack_buffer_b() {
  return runtime::thread_scratch_of<float>(runtime::ScratchSlot::gemm_pack_b, kKC * kNC + kPackSlack);
}

struct Problem {
  MatrixView a, b;
  int64_t k;
  float alpha, beta;
  float* c;
  int64_t ldc;
  const GemmEpilogue* epilogue;
  MicroKernel kernel;
};

// An edge tile: run the full kernel into a scratch tile, then merge the valid part into C.
void edge_tile(const Problem& pr, int64_t kc, const float* pa, const float* pb, float* c, int64_t rows, int64_t cols,
               float beta) {
  alignas(64) float tile[kMR * kNR];
  pr.kernel(kc, pa, pb, tile, kNR, pr.alpha, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* crow = c + r * pr.ldc;
    const float* trow = tile + r * kNR;
    if (beta == 0.0f) {
      for (int64_t j = 0; j < cols; ++j) crow[j] = trow[j];
    } else {
      for (int64_t j = 0; j < cols; ++j) crow[j] = trow[j] + beta * crow[j];
    }
  }
}

// Computes the C region [i0, i1) x [j0, j1) serially.
void gemm_region(const Problem& pr, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  float* abuf = pack_buffer_a();
  float* bbuf = pack_buffer_b();
  for (int64_t jc = j0; jc < j1; jc += kNC) {
    const int64_t nc = std::min(kNC, j1 - jc);
    // Equal k blocks (784 = 4 x 196, not 3 x 256 + 16): a short last block would run the
    // micro-kernel mostly on loading and storing C.
    const int64_t k_blocks = (pr.k + kKC - 1) / kKC;
    const int64_t k_step = (pr.k + k_blocks - 1) / k_blocks;
    for (int64_t pc = 0; pc < pr.k; pc += k_step) {
      const int64_t kc = std::min(k_step, pr.k - pc);
      const float beta = pc == 0 ? pr.beta : 1.0f;
      const bool last = pc + kc == pr.k;
      for (int64_t ic = i0; ic < i1; ic += kMC) {
        const int64_t mc = std::min(kMC, i1 - ic);
        pack_a(pr.a, ic, mc, pc, kc, abuf);
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          const int64_t cols = std::min(kNR, nc - jr);
          float* pb = bbuf + jr * kc;
          // B panels are packed during the first row block, right before their first use, so the
          // packed panel is still in L1 for it; later row blocks reuse them from L2/L3.
          if (ic == i0) pack_b(pr.b, pc, kc, jc + jr, cols, pb);
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const int64_t rows = std::min(kMR, mc - ir);
            const float* pa = abuf + ir * kc;
            float* ctile = pr.c + (ic + ir) * pr.ldc + (jc + jr);
            if (rows == kMR && cols == kNR) {
              pr.kernel(kc, pa, pb, ctile, pr.ldc, pr.alpha, beta);
            } else {
              edge_tile(pr, kc, pa, pb, ctile, rows, cols, beta);
            }
            if (last) apply_epilogue(pr.c, pr.ldc, ic + ir, rows, jc + jr, cols, *pr.epilogue);
          }
        }
      }
    }
  }
}

// Splits [0, extent) into `parts` pieces whose boundaries are multiples of `unit`.
int64_t split_point(int64_t extent, int64_t parts, int64_t index, int64_t unit) {
  if (index >= parts) return extent;
  const int64_t units = (extent + unit - 1) / unit;
  return std::min(extent, units * index / parts * unit);
}

}  // namespace

void sgemm_packed(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const GemmEpilogue& epilogue,
                  runtime::ThreadPool& pool) {
  const Problem pr{MatrixView{a, lda, trans_a},
                   MatrixView{b, ldb, trans_b},
                   k,
                   alpha,
                   beta,
                   c,
                   ldc,
                   &epilogue,
#if TESSERA_X86_KERNELS
                   use_avx2() ? &microkernel_avx2 : &microkernel_generic};
#else
                   &microkernel_generic};
#endif
  // Below about a million flops the wake-up of a second thread costs more than it saves.
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int64_t max_threads = flops < 1.0e6 ? 1 : pool.size();
  // The thread grid tm x tn that minimises the half-perimeter of a thread's region (its packing
  // work), among grids that leave every thread at least one register tile.
  int64_t tm = 1, tn = 1;
  double best = -1.0;
  for (int64_t threads = max_threads; threads >= 1 && best < 0; --threads) {
    for (int64_t cand_n = 1; cand_n <= threads; ++cand_n) {
      if (threads % cand_n != 0) continue;
      const int64_t cand_m = threads / cand_n;
      if ((m + kMR - 1) / kMR < cand_m || (n + kNR - 1) / kNR < cand_n) continue;
      const double cost = static_cast<double>(m) / cand_m + static_cast<double>(n) / cand_n;
      if (best < 0 || cost < best) {
        best = cost;
        tm = cand_m;
        tn = cand_n;
      }
    }
  }
  pool.parallel_for(tm * tn, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t ti = t / tn, tj = t % tn;
      const int64_t i0 = split_point(m, tm, ti, kMR), i1 = split_point(m, tm, ti + 1, kMR);
      const int64_t j0 = split_point(n, tn, tj, kNR), j1 = split_point(n, tn, tj + 1, kNR);
      if (i0 < i1 && j0 < j1) gemm_region(pr, i0, i1, j0, j1);
    }
  });
}

}  // namespace tessera::kernels::gemm_detail
