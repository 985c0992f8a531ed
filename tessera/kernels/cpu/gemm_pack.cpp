// Packing of A and B blocks into the panel layouts the micro-kernels read sequentially. Each layout
// is chosen so the source is read along its contiguous direction where possible.
#include <algorithm>
#include <cstring>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/gemm_internal.h"
#include "tessera/kernels/cpu/x86_kernels.h"

namespace tessera::kernels::gemm_detail {

void pack_a(const MatrixView& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  [[maybe_unused]] const bool avx2 = use_avx2();
  for (int64_t ir = 0; ir < mc; ir += kMR, dst += kMR * kc) {
    const int64_t rows = std::min(kMR, mc - ir);
#if TESSERA_X86_KERNELS
    if (a.trans && rows == kMR && avx2) {
      pack_at_panel_avx2(a.data + p0 * a.ld + (i0 + ir), a.ld, kc, dst);
    } else
#endif
    if (a.trans) {
      // op(A)[i, p] = A[p, i]: the MR values of one p are contiguous.
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = a.data + (p0 + p) * a.ld + (i0 + ir);
        float* out = dst + p * kMR;
        int64_t r = 0;
        for (; r < rows; ++r) out[r] = src[r];
        for (; r < kMR; ++r) out[r] = 0.0f;
      }
#if TESSERA_X86_KERNELS
    } else if (rows == kMR && avx2) {
      pack_a_panel_avx2(a.data + (i0 + ir) * a.ld + p0, a.ld, kc, dst);
#endif
    } else if (rows == kMR) {
      const float* r0 = a.data + (i0 + ir) * a.ld + p0;
      const float* r1 = r0 + a.ld;
      const float* r2 = r1 + a.ld;
      const float* r3 = r2 + a.ld;
      const float* r4 = r3 + a.ld;
      const float* r5 = r4 + a.ld;
      for (int64_t p = 0; p < kc; ++p) {
        float* out = dst + p * kMR;
        out[0] = r0[p];
        out[1] = r1[p];
        out[2] = r2[p];
        out[3] = r3[p];
        out[4] = r4[p];
        out[5] = r5[p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        float* out = dst + p * kMR;
        int64_t r = 0;
        for (; r < rows; ++r) out[r] = a.data[(i0 + ir + r) * a.ld + p0 + p];
        for (; r < kMR; ++r) out[r] = 0.0f;
      }
    }
  }
}

void pack_b(const MatrixView& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  [[maybe_unused]] const bool avx2 = use_avx2();
  for (int64_t jr = 0; jr < nc; jr += kNR, dst += kNR * kc) {
    const int64_t cols = std::min(kNR, nc - jr);
    if (!b.trans) {
      // op(B)[p, j] = B[p, j]: one panel row is a contiguous run of NR floats.
      const float* src = b.data + p0 * b.ld + (j0 + jr);
#if TESSERA_X86_KERNELS
      if (cols == kNR && avx2) {
        pack_b_panel_avx2(src, b.ld, kc, dst);
      } else
#endif
      if (cols == kNR) {
        for (int64_t p = 0; p < kc; ++p) std::memcpy(dst + p * kNR, src + p * b.ld, sizeof(float) * kNR);
      } else {
        for (int64_t p = 0; p < kc; ++p) {
          float* out = dst + p * kNR;
          int64_t c = 0;
          for (; c < cols; ++c) out[c] = src[p * b.ld + c];
          for (; c < kNR; ++c) out[c] = 0.0f;
        }
      }
#if TESSERA_X86_KERNELS
    } else if (cols == kNR && avx2) {
      pack_bt_panel_avx2(b.data + (j0 + jr) * b.ld + p0, b.ld, kc, dst);
#endif
    } else {
      // op(B)[p, j] = B[j, p]: read each source row contiguously and scatter it down a panel column
      // (the panel is L1-sized, so the strided writes stay cheap).
      for (int64_t c = 0; c < cols; ++c) {
        const float* src = b.data + (j0 + jr + c) * b.ld + p0;
        for (int64_t p = 0; p < kc; ++p) dst[p * kNR + c] = src[p];
      }
      for (int64_t c = cols; c < kNR; ++c)
        for (int64_t p = 0; p < kc; ++p) dst[p * kNR + c] = 0.0f;
    }
  }
}

}  // namespace tessera::kernels::gemm_detail
