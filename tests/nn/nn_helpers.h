#pragma once
// Small helpers shared by the nn module tests: reading tensors as doubles, comparing against
// reference values computed in the tests themselves, and seeded random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"

namespace tessera::test {

inline std::vector<double> values(const Tensor& t) {
  return t.array().to_f64();
}

// A leaf tensor from doubles (random_array already gives deterministic data).
inline Tensor random_tensor(const Shape& shape, uint64_t seed, DType dtype = DType::f32, double lo = -1.0,
                            double hi = 1.0) {
  return Tensor::from_array(random_array(shape, seed, lo, hi, dtype));
}

inline void expect_values_near(const std::vector<double>& got, const std::vector<double>& want, double tol,
                               const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what << ": element count differs";
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1.0 + std::abs(want[i]))) << what << " element " << i;
  }
}

inline bool bytes_equal(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Array ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()) == 0;
}

// Row-major index helpers for the hand-written reference loops.
inline size_t idx2(int64_t i, int64_t j, int64_t d1) {
  return static_cast<size_t>(i * d1 + j);
}
inline size_t idx3(int64_t i, int64_t j, int64_t k, int64_t d1, int64_t d2) {
  return static_cast<size_t>((i * d1 + j) * d2 + k);
}
inline size_t idx4(int64_t i, int64_t j, int64_t k, int64_t l, int64_t d1, int64_t d2, int64_t d3) {
  return static_cast<size_t>(((i * d1 + j) * d2 + k) * d3 + l);
}

}  // namespace tessera::test
