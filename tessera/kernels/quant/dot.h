#pragma once
// Internal to tessera/kernels/quant: the per-type dot-product kernels behind quantized_matmul.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessera/quant/ggml_type.h"

namespace tessera::kernels::quant {

inline constexpr int kMaxRows = 4;  // activation rows one kernel call handles

// The quantized activation rows a kernel reads: `rows` (1..kMaxRows) rows of nb activation blocks,
// `stride` bytes apart, and each block's scale as f32 (`scales`, nb per row), decoded once so the inner
// loops need not convert f16, and each block's scaled code sum (for weights with an offset, so that
// the offset can be applied once per block). For float weight types a "block" is one value and the
// rows are f32.
struct ActRows {
  const uint8_t* data;
  size_t stride;
  const float* scales;
  const float* sums;  // scale * (sum of the block's codes), nb per row (Q8_0/Q8_1 activations)
  int rows;
};

// out[i * act.rows + r] = dot(weight row w[i] (nb weight blocks), activation row r) for i < nw, r <
// act.rows. Kernels take nw = 1 with 1..kMaxRows activation rows, or nw = kMaxRows with one.
using DotFn = void (*)(int64_t nb, const uint8_t* const* w, int nw, const ActRows& act, float* out);

DotFn portable_dot(tessera::quant::GgmlType type);  // nullptr if the type has no kernel at all
DotFn avx2_dot(tessera::quant::GgmlType type);      // nullptr where no AVX2 kernel exists

template <class T>
T load_as(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace tessera::kernels::quant
