// The GEMM epilogue: C = post(act(C + bias) + residual) on a tile that the micro-kernel just stored, so
// the tile is still in L1 and the fused ops cost no extra pass over memory.
#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/gemm_internal.h"

namespace tessera::kernels {

void apply_activation(Activation act, float* x, int64_t n) {
  switch (act) {
    case Activation::none:
      return;
    case Activation::relu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] < 0.0f ? 0.0f : x[i];  // NaN passes through
      return;
    default:
      for (int64_t i = 0; i < n; ++i) x[i] = activation_value(act, x[i]);
      return;
  }
}

namespace gemm_detail {

bool epilogue_is_empty(const GemmEpilogue& e) {
  return e.bias == nullptr && e.activation == Activation::none && e.residual == nullptr &&
         e.post_activation == Activation::none;
}

void apply_epilogue(float* c, int64_t ldc, int64_t i0, int64_t rows, int64_t j0, int64_t cols, const GemmEpilogue& e) {
  if (epilogue_is_empty(e)) return;
  for (int64_t r = 0; r < rows; ++r) {
    float* crow = c + (i0 + r) * ldc + j0;
    if (e.bias != nullptr) {
      const float* bias = e.bias + j0;
      for (int64_t j = 0; j < cols; ++j) crow[j] += bias[j];
    }
    apply_activation(e.activation, crow, cols);
    if (e.residual != nullptr) {
      const float* res = e.residual + (i0 + r) * e.ldr + j0;
      for (int64_t j = 0; j < cols; ++j) crow[j] += res[j];
    }
    apply_activation(e.post_activation, crow, cols);
  }
}

}  // namespace gemm_detail
}  // namespace tessera::kernels
