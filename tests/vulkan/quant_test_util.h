#pragma once
// Quantized-product helpers of the Vulkan suite: GGUF weight rows from random values, and the graph of
// one quantized_matmul.
#include <string>

#include "tessera/ops/quant.h"
#include "test_util.h"

namespace tessera::test {

// Weights [n, k] of `type` as u8 rows, from values of a few sizes (so that blocks use their scales).
inline Array quantized_weights(int64_t n, int64_t k, const std::string& type, uint64_t seed) {
  return ops::quantize_array(random_array({n, k}, seed, -1.5, 1.5, DType::f32), type);
}

// y = x W^T for x [m, k] f32 and W the u8 rows of `w`.
inline ir::Graph product_graph(int64_t m, int64_t k, const Array& w, const std::string& type) {
  auto f = [type](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::quantized_matmul(a[0], a[1], type)}; };
  return trace(f, {{DType::f32, {m, k}}, {DType::u8, w.shape()}});
}

}  // namespace tessera::test
