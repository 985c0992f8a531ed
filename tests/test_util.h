#pragma once
// Helpers shared by the test suites.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tessera/tessera.h"
#include "tessera/testing/gradcheck.h"

namespace tessera::test {

// Asserts that `statement` throws tessera::Error whose message contains every given fragment.
#define EXPECT_TESSERA_ERROR(statement, ...)                                                   \
  do {                                                                                         \
    try {                                                                                      \
      statement;                                                                               \
      ADD_FAILURE() << "expected tessera::Error from: " #statement;                            \
    } catch (const ::tessera::Error& tessera_error_) {                                                    \
      for (const std::string& fragment : std::vector<std::string>{__VA_ARGS__}) {              \
        EXPECT_NE(std::string(tessera_error_.what()).find(fragment), std::string::npos)                   \
            << "message \"" << tessera_error_.what() << "\" lacks \"" << fragment << "\"";                  \
      }                                                                                        \
    }                                                                                          \
  } while (0)

inline void expect_close(const Tensor& actual, const std::vector<double>& expected, double atol = 1e-6,
                         double rtol = 1e-6) {
  const std::vector<double> got = actual.array().to_f64();
  ASSERT_EQ(got.size(), expected.size()) << "element count differs";
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": expected nan, got " << got[i];
      continue;
    }
    if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got[i], expected[i], atol + rtol * std::abs(expected[i])) << "element " << i;
  }
}

inline void expect_shape(const Tensor& t, const Shape& shape) {
  EXPECT_EQ(shape_str(t.shape()), shape_str(shape));
}

// True when a and b have the same dtype, shape and bytes (views compared by their elements).
inline bool same_bytes(const Array& a, const Array& b) {
  const Array ca = a.contiguous(), cb = b.contiguous();
  return ca.dtype() == cb.dtype() && ca.shape() == cb.shape() &&
         std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()) == 0;
}

// Deterministic random f64 arrays for gradient checks, values in [lo, hi].
inline Array random_array(const Shape& shape, uint64_t seed, double lo = -1.0, double hi = 1.0,
                          DType dtype = DType::f64) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = dist(rng);
  return Array::from_vector(v, shape).astype(dtype);
}

// The types of `arrays`, to trace a function over them.
inline std::vector<ir::TensorType> types_of(const std::vector<Array>& arrays) {
  std::vector<ir::TensorType> types;
  for (const Array& a : arrays) types.push_back({a.dtype(), a.shape()});
  return types;
}

// Runs the finite-difference check and reports the mismatches on failure.
#define EXPECT_GRADIENTS_MATCH(fn, inputs, ...)                                              \
  do {                                                                                       \
    auto gc_result = ::tessera::testing::check_gradients(fn, inputs __VA_OPT__(, ) __VA_ARGS__); \
    EXPECT_TRUE(gc_result.ok) << gc_result.message;                                          \
  } while (0)

// Scoped environment variable (restored on destruction).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace tessera::test
