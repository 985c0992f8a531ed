#pragma once
// Sample graphs for the differential tests over the whole op set: each sample traces a small
// function on given input types; its inputs are random (or chosen by `data`) and the CPU backend's
// results must equal the reference backend's.
#include <functional>
#include <string>
#include <vector>

#include "cpu_test_util.h"

namespace tessera::test {

struct Sample {
  std::string name;
  std::vector<ir::TensorType> inputs;
  MultiFn fn;
  // Input i's data; default: uniform in [lo, hi] for floats, small integers, random bools.
  std::function<Array(size_t i, const ir::TensorType& type, uint64_t seed)> data;
  double lo = -2.0, hi = 2.0;
  double tol = -1;        // <0: by dtype
  bool optional = false;  // the op may reject these input types (then the sample is skipped)
  bool strided = true;    // also run with non-contiguous input views
};

std::vector<Sample> elementwise_samples();  // test_ops_elementwise.cpp
std::vector<Sample> structural_samples();   // test_ops_structural.cpp (shape, index, reduce, creation)
std::vector<Sample> nn_samples();           // test_ops_nn.cpp (nn, conv, pool, matmul, quant)

// A sample function with one output.
MultiFn one_output(std::function<Tensor(const std::vector<Tensor>&)> f);
// Random data of a type: floats in [lo, hi], integers in [-5, 5] (u8 [0, 10]), bools.
Array sample_array(const ir::TensorType& type, uint64_t seed, double lo, double hi);
// The same values as `a` in a non-contiguous view (every other element of a larger array).
Array strided_copy_of(const Array& a);
// One node of `op` as a Tensor: for ops without a plain ops:: function of their own.
inline Tensor node1(const std::string& op, std::vector<ir::Value> inputs, ir::Attrs attrs) {
  return ir::make_node1(op, std::move(inputs), std::move(attrs));
}
// Traces and runs the sample on both backends; returns the graph's op names ({} if skipped).
std::vector<std::string> check_sample(const Sample& s, bool strided_inputs);

}  // namespace tessera::test
