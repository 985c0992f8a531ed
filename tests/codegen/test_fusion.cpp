// find_clusters on small graphs: what fuses, what does not, cycle avoidance, multiple outputs.
#include <unordered_set>

#include "codegen_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

ir::TensorType f32(const Shape& s) {
  return {DType::f32, s};
}

std::vector<std::string> op_names(const lower::Cluster& c) {
  std::vector<std::string> names;
  for (const auto& n : c.nodes) names.push_back(n->op_name());
  return names;
}

// Every eligible node in exactly one cluster, no other node in any, nodes in topological order, and
// clusters ordered so that each one's inputs are computed before it.
void expect_partition(const ir::Graph& g, const std::vector<lower::Cluster>& clusters,
                      const std::function<bool(const ir::Node&)>& eligible) {
  std::unordered_map<const ir::Node*, size_t> position;
  for (size_t i = 0; i < g.nodes().size(); ++i) position[g.nodes()[i].get()] = i;
  std::unordered_map<const ir::Node*, size_t> cluster_of;
  for (size_t c = 0; c < clusters.size(); ++c) {
    for (size_t k = 0; k < clusters[c].nodes.size(); ++k) {
      const ir::Node* n = clusters[c].nodes[k].get();
      EXPECT_TRUE(eligible(*n)) << n->op_name() << " is not eligible but was clustered";
      EXPECT_TRUE(cluster_of.emplace(n, c).second) << n->op_name() << " is in two clusters";
      if (k > 0) {
        EXPECT_LT(position.at(clusters[c].nodes[k - 1].get()), position.at(n));
      }
    }
  }
  for (const auto& n : g.nodes()) {
    if (eligible(*n)) {
      EXPECT_TRUE(cluster_of.count(n.get())) << n->op_name() << " is eligible but in no cluster";
    }
  }
  // A cluster input made by another cluster must come from an earlier one.
  for (size_t c = 0; c < clusters.size(); ++c) {
    for (const ir::Value& v : clusters[c].inputs) {
      auto it = cluster_of.find(v.node().get());
      if (it != cluster_of.end()) {
        EXPECT_LT(it->second, c) << "cluster order violates a dependency";
      }
    }
  }
}

std::vector<lower::Cluster> clusters_of(const ir::Graph& g) {
  auto eligible = [](const ir::Node& n) { return lower::can_generate(n); };
  auto clusters = lower::find_clusters(g, eligible);
  expect_partition(g, clusters, eligible);
  return clusters;
}

}  // namespace

TEST(Fusion, ElementwiseChainIsOneCluster) {
  const ir::Graph g =
      trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(ops::exp(in[0]) * in[1] + 1.0)}; },
            {f32({4, 8}), f32({8})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(op_names(clusters[0]), (std::vector<std::string>{"exp", "mul", "add", "relu"}));
  // Inputs: x, bias, the scalar constant; one output.
  EXPECT_EQ(clusters[0].inputs.size(), 3u);
  ASSERT_EQ(clusters[0].outputs.size(), 1u);
  EXPECT_EQ(clusters[0].outputs[0], g.outputs()[0]);
}

TEST(Fusion, LibraryCallsSplitChains) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        const Tensor h = ops::relu(in[0] * 2.0);
        return std::vector<Tensor>{ops::tanh(ops::matmul(h, in[1]) + in[2])};
      },
      {f32({4, 8}), f32({8, 3}), f32({3})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(op_names(clusters[0]), (std::vector<std::string>{"mul", "relu"}));
  EXPECT_EQ(op_names(clusters[1]), (std::vector<std::string>{"add", "tanh"}));
}

TEST(Fusion, NeverClosesACycleThroughAnOutsideNode) {
  // y = exp(x); z = matmul(y, w); out = y + z: fusing exp with the add would need z before and after.
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        const Tensor y = ops::exp(in[0]);
        return std::vector<Tensor>{y + ops::matmul(y, in[1])};
      },
      {f32({4, 4}), f32({4, 4})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(op_names(clusters[0]), (std::vector<std::string>{"exp"}));
  EXPECT_EQ(op_names(clusters[1]), (std::vector<std::string>{"add"}));
}

TEST(Fusion, NeverClosesACycleThroughAnotherCluster) {
  // a = exp(x) -> matmul -> b = relu(m) (a cluster of its own) ; out = sin(a) * b.
  // sin joins exp; the mul cannot join {exp, sin} because b depends on a, and joining b's cluster
  // too would put the matmul both before and after the merged cluster.
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        const Tensor a = ops::exp(in[0]);
        const Tensor b = ops::relu(ops::matmul(a, in[1]));
        return std::vector<Tensor>{ops::sin(a) * b};
      },
      {f32({4, 4}), f32({4, 4})});
  const auto clusters = clusters_of(g);
  for (const auto& c : clusters) {
    const auto names = op_names(c);
    const bool has_exp = std::find(names.begin(), names.end(), "exp") != names.end();
    const bool has_mul = std::find(names.begin(), names.end(), "mul") != names.end();
    EXPECT_FALSE(has_exp && has_mul) << "exp and mul fused across the matmul";
  }
  const JitRun jit = run_with_jit(g, {random_of(DType::f32, {4, 4}, 1), random_of(DType::f32, {4, 4}, 2)});
  expect_arrays_match(jit.outputs,
                      run_reference(g, {random_of(DType::f32, {4, 4}, 1), random_of(DType::f32, {4, 4}, 2)}), 1e-5);
}

TEST(Fusion, AdamUpdateIsOneClusterWithThreeOutputs) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        const Tensor &p = in[0], &g_ = in[1], &m = in[2], &v = in[3];
        const Tensor m2 = m * 0.9 + g_ * 0.1;
        const Tensor v2 = v * 0.999 + ops::square(g_) * 0.001;
        const Tensor p2 = p - m2 * 0.01 / (ops::sqrt(v2) + 1e-8);
        return std::vector<Tensor>{p2, m2, v2};
      },
      {f32({16, 8}), f32({16, 8}), f32({16, 8}), f32({16, 8})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0].outputs.size(), 3u);
  std::vector<Array> in;
  for (uint64_t s = 0; s < 4; ++s) in.push_back(random_of(DType::f32, {16, 8}, s, s == 3 ? 0 : -1, 1));
  expect_arrays_match(run_with_jit(g, in).outputs, run_reference(g, in));
}

TEST(Fusion, ElementwiseFeedsReductionAndEpilogue) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::sqrt(ops::sum(ops::square(in[0] - in[1]), {1}) * 0.5 + 1.0)};
      },
      {f32({6, 10}), f32({10})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(op_names(clusters[0]), (std::vector<std::string>{"sub", "square", "sum", "mul", "add", "sqrt"}));
}

TEST(Fusion, ReductionResultBroadcastBackIsOneRowKernel) {
  // x - max(x, keepdims) needs the reduction finished before the elementwise pass: the row phase
  // walks the row again after it (test_row_kernels.cpp has the rule's limits).
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::exp(in[0] - ops::max(in[0], {1}, true))}; },
      {f32({5, 7})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(op_names(clusters[0]), (std::vector<std::string>{"max", "sub", "exp"}));
  const lower::Kernel k = lower::build_loop_kernel(clusters[0]);
  EXPECT_TRUE(k.has_row_phase());
  EXPECT_TRUE(k.body_stores.empty());
  EXPECT_TRUE(k.epilogue_stores.empty());
}

TEST(Fusion, ReductionsOverDifferentAxesStayApart) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        const Tensor e = ops::exp(in[0]);
        return std::vector<Tensor>{ops::sum(e, {0}), ops::sum(e, {1})};
      },
      {f32({5, 7})});
  const auto clusters = clusters_of(g);
  EXPECT_EQ(clusters.size(), 2u);
}

TEST(Fusion, SiblingReductionsOverTheSameAxesShareAKernel) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::sum(in[0], {1}) + ops::sum(ops::square(in[0]), {1})};
      },
      {f32({5, 7})});
  const auto clusters = clusters_of(g);
  // The add joins both reduction clusters: two accumulators in one loop, the add in the epilogue.
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(lower::build_loop_kernel(clusters[0]).reductions.size(), 2u);
  const std::vector<Array> in = {random_of(DType::f32, {5, 7}, 3)};
  expect_arrays_match(run_with_jit(g, in).outputs, run_reference(g, in));
}

TEST(Fusion, IneligibleNodesAreNeverClustered) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(ops::exp(in[0]) + 1.0)}; }, {f32({4})});
  auto eligible = [](const ir::Node& n) { return lower::can_generate(n) && n.op_name() != "exp"; };
  const auto clusters = lower::find_clusters(g, eligible);
  expect_partition(g, clusters, eligible);
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(op_names(clusters[0]), (std::vector<std::string>{"add", "relu"}));
}

TEST(Fusion, SmallValueUsedOutsideIsNotAnOutputOfABigCluster) {
  // s (shape []) feeds a broadcast and is also a graph output: it cannot be written by a [4, 8] kernel.
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        const Tensor s = ops::exp(in[1]);
        return std::vector<Tensor>{in[0] * s, s};
      },
      {f32({4, 8}), f32({})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 2u);
  const std::vector<Array> in = {random_of(DType::f32, {4, 8}, 1), random_of(DType::f32, {}, 2)};
  expect_arrays_match(run_with_jit(g, in).outputs, run_reference(g, in));
}

TEST(Fusion, ScalarChainFeedingOneBroadcastFusesIn) {
  const ir::Graph g =
      trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * ops::exp(in[1] * 2.0)}; },
            {f32({4, 8}), f32({})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 1u);
}

TEST(Fusion, GeneratorsJoinTheirOnlyConsumer) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::where(ops::gt(in[0], ops::zeros_like(in[0])), in[0], ops::zeros_like(in[0]))};
      },
      {f32({4, 8})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0].inputs.size(), 1u);  // only x; the zeros are literals
}

TEST(Fusion, CanGenerateRejectsHalfPrecisionAndUnknownOps) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::exp(in[0]), ops::softmax(ops::cast(in[0], DType::f32), 0),
                                   ops::argmax(ops::cast(in[0], DType::f32), 0)};
      },
      {{DType::f16, {4}}});
  for (const auto& n : g.nodes()) {
    const std::string& op = n->op_name();
    if (op == "exp" || op == "softmax" || op == "argmax" || op == "cast") {
      EXPECT_FALSE(lower::can_generate(*n)) << op;
    }
  }
}

TEST(Fusion, LongChainsAreCutIntoBoundedKernels) {
  // 3000 elementwise ops in a row: clustered without re-lowering the cluster at every step, into
  // kernels of at most 256 nodes that chain through one stored value each.
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        Tensor x = in[0];
        for (int i = 0; i < 1000; ++i) x = ops::tanh(x * 0.5 + in[1]);
        return std::vector<Tensor>{x};
      },
      {f32({16, 16}), f32({16})});
  const auto clusters = clusters_of(g);
  ASSERT_EQ(clusters.size(), 12u);  // ceil(3000 / 256)
  size_t total = 0;
  for (const auto& c : clusters) {
    EXPECT_LE(c.nodes.size(), 256u);
    total += c.nodes.size();
    EXPECT_EQ(lower::build_loop_kernel(c).body_stores.size(), 1u);
  }
  EXPECT_EQ(total, 3000u);
}

TEST(Fusion, RotaryPairsOfAStackedProjectionAreOneCluster) {
  // Llama's RoPE on the q/k part of a stacked q/k/v product (a slice whose rows lie apart): the pairs,
  // their flipped copy, both products and the reshape folding pairs back into heads are one kernel,
  // computed over the unmerged pair axes (the flip reads through two reshapes with a negative step),
  // instead of one kernel that copies the pairs out for a second.
  const int64_t n = 4, heads = 5, d = 8;
  const MultiFn rope = [&](const std::vector<Tensor>& in) {
    const Tensor x = ops::reshape(ops::slice(in[0], 1, 0, heads * d), {n, heads, d});
    const Tensor pairs = ops::reshape(x, {n, heads, d / 2, 2});
    const Tensor cos = ops::reshape(in[1], {n, 1, d / 2, 1});
    const Tensor sin = ops::reshape(in[2], {n, 1, d / 2, 2});
    return std::vector<Tensor>{ops::reshape(pairs * cos + ops::flip(pairs, {3}) * sin, {n, heads, d})};
  };
  const auto clusters = clusters_of(trace(rope, {f32({n, (heads + 2) * d}), f32({n, d / 2}), f32({n, d})}));
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0].outputs.size(), 1u);
  check_against_reference(rope, {random_of(DType::f32, {n, (heads + 2) * d}, 1), random_of(DType::f32, {n, d / 2}, 2),
                                 random_of(DType::f32, {n, d}, 3)});
}
