#pragma once
// Shared pieces of the composite gradient tests: a guard that a gradient check is not vacuous (a
// model whose gradients are all zero would pass any finite-difference comparison).
#include "test_util.h"

namespace tessera::test {

// Asserts that d/d(input) sum(fn(inputs)) is not identically zero for every floating input.
inline void expect_nonzero_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                     const std::vector<Array>& inputs) {
  std::vector<Tensor> args;
  std::vector<size_t> wrt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    args.push_back(Tensor::from_array(inputs[i]));
    if (is_floating(inputs[i].dtype())) wrt.push_back(i);
  }
  const std::vector<Tensor> grads = grad([&](const std::vector<Tensor>& xs) { return ops::sum(fn(xs)); }, wrt)(args);
  for (size_t k = 0; k < wrt.size(); ++k) {
    double largest = 0;
    for (double g : grads[k].array().to_f64()) largest = std::max(largest, std::abs(g));
    EXPECT_GT(largest, 1e-6) << "the gradient for input " << wrt[k] << " is zero: the check would be vacuous";
  }
}

}  // namespace tessera::test
