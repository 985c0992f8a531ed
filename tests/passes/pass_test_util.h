#pragma once
// Helpers for the pass tests: trace a function into a graph, list its ops, run graphs on the
// reference backend and compare their values.
#include <string>
#include <vector>

#include "tessera/passes/pass.h"
#include "test_util.h"

namespace tessera::test {

using TypeList = std::vector<ir::TensorType>;

inline ir::TensorType f32(const Shape& shape) {
  return {DType::f32, shape};
}
inline ir::TensorType f64(const Shape& shape) {
  return {DType::f64, shape};
}
inline ir::TensorType i64(const Shape& shape) {
  return {DType::i64, shape};
}

inline ir::Graph trace_graph(const MultiFn& fn, const TypeList& types) {
  return trace(fn, types);
}
inline ir::Graph trace_graph1(const std::function<Tensor(const std::vector<Tensor>&)>& fn, const TypeList& types) {
  return trace([fn](const std::vector<Tensor>& xs) { return std::vector<Tensor>{fn(xs)}; }, types);
}

// The graph's ops in order, space-separated: "matmul add relu".
inline std::string op_names(const ir::Graph& g) {
  std::string s;
  for (const ir::NodePtr& n : g.nodes()) s += (s.empty() ? "" : " ") + n->op_name();
  return s;
}

// The same nodes (by identity) in the same order, and the same outputs: what a pass that found
// nothing to do returns.
inline bool same_graph(const ir::Graph& a, const ir::Graph& b) {
  return a.nodes() == b.nodes() && a.outputs() == b.outputs() && a.inputs() == b.inputs();
}

inline size_t count_op(const ir::Graph& g, const std::string& op) {
  size_t n = 0;
  for (const ir::NodePtr& node : g.nodes()) n += node->op_name() == op;
  return n;
}

// Runs one pass and checks the result's invariants and signature.
inline ir::Graph apply(const passes::Pass& pass, const ir::Graph& g) {
  ir::Graph out = pass.run(g);
  ir::verify(out);
  EXPECT_EQ(out.inputs(), g.inputs());
  EXPECT_EQ(out.output_types(), g.output_types());
  return out;
}

// Inputs for a graph: floats uniform in [lo, hi], integers in [0, int_high), bools random.
inline std::vector<Array> random_inputs(const ir::Graph& g, uint64_t seed, double lo = -1.0, double hi = 1.0,
                                        int64_t int_high = 2) {
  std::vector<Array> inputs;
  for (const ir::TensorType& t : g.input_types()) {
    if (is_floating(t.dtype)) {
      inputs.push_back(random_array(t.shape, seed++, lo, hi, t.dtype));
    } else {
      Array a = random_array(t.shape, seed++, 0.0, static_cast<double>(int_high) - 1e-9, DType::f64);
      std::vector<double> v = a.to_f64();
      for (double& x : v) x = std::floor(x);
      inputs.push_back(Array::from_vector(v, t.shape).astype(t.dtype));
    }
  }
  return inputs;
}

inline std::vector<Array> run_reference(const ir::Graph& g, const std::vector<Array>& inputs) {
  return backends::reference_backend().compile(g)->run(inputs);
}

// Both graphs on the same inputs give the same outputs (within atol + rtol * |expected|; NaNs and
// infinities must match exactly).
inline void expect_same_values(const ir::Graph& before, const ir::Graph& after, const std::vector<Array>& inputs,
                               double atol = 0.0, double rtol = 0.0) {
  const std::vector<Array> want = run_reference(before, inputs);
  const std::vector<Array> got = run_reference(after, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].dtype(), got[i].dtype()) << "output " << i;
    ASSERT_EQ(want[i].shape(), got[i].shape()) << "output " << i;
    const std::vector<double> w = want[i].to_f64(), g = got[i].to_f64();
    for (size_t k = 0; k < w.size(); ++k) {
      if (std::isnan(w[k]) || std::isinf(w[k])) {
        EXPECT_TRUE(std::isnan(w[k]) ? std::isnan(g[k]) : g[k] == w[k]) << "output " << i << " element " << k;
        continue;
      }
      EXPECT_NEAR(g[k], w[k], atol + rtol * std::abs(w[k])) << "output " << i << " element " << k;
    }
  }
}

inline void expect_same_values(const ir::Graph& before, const ir::Graph& after, uint64_t seed = 1, double atol = 0.0,
                               double rtol = 0.0) {
  expect_same_values(before, after, random_inputs(before, seed), atol, rtol);
}

}  // namespace tessera::test
