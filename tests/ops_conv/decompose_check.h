#pragma once
// Helpers of the conv/pool decomposition tests: one-op graphs, the CUDA backend's keep rule written
// out, and a comparison of a graph with its decomposition on the reference backend.
#include <algorithm>
#include <set>
#include <string>

#include "tessera/lower/fusion.h"
#include "tessera/passes/decompose.h"
#include "test_util.h"

namespace tessera::test {

inline const std::set<std::string>& conv_pool_ops() {
  static const std::set<std::string> ops = {"conv",          "conv_input_grad", "conv_weight_grad", "max_pool",
                                            "max_pool_grad", "max_pool_gather", "avg_pool",         "avg_pool_grad"};
  return ops;
}

// The rule of CudaBackend::supports (tessera/backends/cuda/cuda_backend.cpp), replicated so that it is
// checked without CUDA: matmul of f32/f16/bf16 (cuda_matmul_supported, library_ops_matmul.cpp),
// gather/scatter_add with i32/i64 indices (cuda_index_op_supported, library_ops_index.cpp; scatter_add
// only for f32/f64/i32/i64), the view lowerings of cpu::register_view_lowerings, inputs and constants,
// and whatever lower::can_generate accepts (no half types; it takes every f32/f64 sum, so the cuBLAS
// leading-sum claim is left out).
inline bool cuda_keeps(const ir::Node& n) {
  const std::string& op = n.op_name();
  auto index_ok = [&] {
    return n.inputs().size() > 1 && (n.input(1).dtype() == DType::i32 || n.input(1).dtype() == DType::i64);
  };
  if (op == "matmul") {
    const DType dt = n.input(0).dtype();
    return (dt == DType::f32 || dt == DType::f16 || dt == DType::bf16) && n.input(1).dtype() == dt &&
           n.input(0).rank() >= 2 && n.input(1).rank() >= 2;
  }
  if (op == "gather") return n.inputs().size() == 2 && n.input(0).rank() > 0 && index_ok();
  if (op == "scatter_add") {
    const DType dt = n.input(0).dtype();
    return n.inputs().size() == 3 && index_ok() &&
           (dt == DType::f32 || dt == DType::f64 || dt == DType::i32 || dt == DType::i64);
  }
  static const std::set<std::string> claimed = {"constant",     "input", "reshape", "stop_gradient", "permute",
                                                "broadcast_to", "slice", "split",   "flip"};
  return claimed.count(op) > 0 || lower::can_generate(n);
}

// Decomposes the conv/pool nodes (as a backend lacking all of them would).
inline ir::Graph decompose_conv_pool(const ir::Graph& g) {
  return passes::decompose_where(g, [](const ir::Node& n) { return conv_pool_ops().count(n.op_name()) > 0; });
}

// A graph of the single node `op` on inputs of the given types.
inline ir::Graph one_op_graph(const std::string& op, const std::vector<ir::TensorType>& types, const ir::Attrs& attrs) {
  return trace(
      [&](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{Tensor(ir::make_node1(op, std::vector<ir::Value>(a.begin(), a.end()), attrs))};
      },
      types);
}

// Arrays of a few distinct integers (0 .. levels - 1), so that windows hold ties.
inline Array int_array(const Shape& shape, uint64_t seed, int levels, DType dtype) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = static_cast<double>(rng() % static_cast<uint64_t>(levels));
  return Array::from_vector(v, shape).astype(dtype);
}

// Runs `g` and its decomposition on the reference backend; every output must agree within
// rtol * max|expected| (0: exactly, NaN where NaN). Returns the decomposed graph.
inline ir::Graph expect_decomposition_matches(const ir::Graph& g, const std::vector<Array>& inputs, double rtol) {
  const ir::Graph d = decompose_conv_pool(g);
  for (const ir::NodePtr& n : d.nodes()) {
    EXPECT_FALSE(conv_pool_ops().count(n->op_name())) << "left whole: " << n->op_name();
  }
  backends::Backend& ref = backends::backend_by_name("reference");
  const std::vector<Array> want = ref.compile(g)->run(inputs);
  const std::vector<Array> got = ref.compile(d)->run(inputs);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    EXPECT_EQ(got[i].dtype(), want[i].dtype());
    EXPECT_EQ(shape_str(got[i].shape()), shape_str(want[i].shape()));
    const std::vector<double> w = want[i].to_f64(), v = got[i].to_f64();
    if (v.size() != w.size()) continue;
    double scale = 0.0;
    for (double x : w) {
      if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
    }
    int bad = 0;
    for (size_t k = 0; k < w.size() && bad < 5; ++k) {
      const bool same = std::isnan(w[k]) ? std::isnan(v[k]) : (w[k] == v[k] || std::abs(v[k] - w[k]) <= rtol * scale);
      if (!same) {
        ADD_FAILURE() << "output " << i << " element " << k << ": decomposed " << v[k] << ", reference " << w[k];
        ++bad;
      }
    }
  }
  return d;
}

// Every node of `g` is one the CUDA backend keeps; where the CUDA backend is built, its own supports()
// agrees with the replicated rule.
inline void expect_cuda_keeps_all(const ir::Graph& g) {
#if defined(TESSERA_HAVE_CUDA)  // without the toolkit "cuda" is the registry's stub, which supports nothing
  const backends::Backend* cuda = backends::find_backend("cuda");
#endif
  for (const ir::NodePtr& n : g.nodes()) {
    EXPECT_TRUE(cuda_keeps(*n)) << "the CUDA backend would not keep " << n->op_name() << " on "
                                << ir::type_str(n->inputs().empty() ? n->output_types()[0] : n->input(0).type());
#if defined(TESSERA_HAVE_CUDA)
    if (cuda != nullptr) {
      EXPECT_EQ(cuda->supports(*n), cuda_keeps(*n)) << n->op_name();
    }
#endif
  }
}

}  // namespace tessera::test
