#pragma once
// Small helpers shared by the convolution, pooling and upsampling tests.
#include <cstdint>
#include <vector>

#include "test_util.h"

namespace tessera::test {

// A dtype and the relative tolerance its results are held to.
struct Precision {
  DType dtype;
  double rtol;
};

inline Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector<double>(v, s); }

// The inputs and output weights of the PyTorch scripts that made the expected values:
// ((i * mul) % mod) / div - sub over the flat index.
inline Array ramp(const Shape& shape, int64_t mul, int64_t mod, double div, double sub) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((static_cast<int64_t>(i) * mul) % mod) / div - sub;
  return Array::from_vector(v, shape);
}

}  // namespace tessera::test
