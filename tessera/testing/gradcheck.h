#pragma once
// Finite-difference gradient checking: compares the gradient that autodiff builds against central
// differences of the function itself. Used by every op's tests; handy for users' custom ops too.
#include <functional>
#include <string>
#include <vector>

#include "tessera/api/tensor.h"

namespace tessera::testing {

struct GradCheckOptions {
  double eps = 1e-6;   // central-difference step (inputs should be f64)
  double atol = 1e-6;  // |analytic - numeric| <= atol + rtol * |numeric|
  double rtol = 1e-5;
  uint64_t seed = 1234;  // for the random projection of non-scalar outputs
};

struct GradCheckResult {
  bool ok = true;
  double max_abs_error = 0.0;
  std::string message;  // the first mismatches, naming input and element
};

// Checks d/d(inputs) of sum(fn(inputs) * W), W a fixed random tensor. Only floating inputs are
// differentiated; integer inputs (indices, targets) are passed through unchanged.
GradCheckResult check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                const std::vector<Array>& inputs, const GradCheckOptions& options = {});

}  // namespace tessera::testing
