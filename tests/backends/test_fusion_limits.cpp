// Limits a backend puts on its generated kernels: a fused cluster that binds more buffers than a
// kernel may (a Vulkan shader describes its bindings in 30 push-constant words) is generated as
// consecutive runs of its nodes, each within the limit, together computing what it computed.
// ONNX's GridSample (43 buffers in one cluster) met this on Vulkan.
#include <gtest/gtest.h>

#include <unordered_set>

#include "tessera/backends/common/fusion_plan.h"
#include "tessera/lower/fusion.h"
#include "tessera/ops/ops.h"
#include "test_util.h"

namespace tessera::test {
namespace {

// sum of a[i] * a[i + 1] over 40 inputs: one elementwise cluster reading them all.
ir::Graph wide_sum() {
  std::vector<ir::TensorType> types(40, ir::TensorType{DType::f32, {16}});
  return trace(
      [](const std::vector<Tensor>& a) {
        Tensor acc = a[0] * a[1];
        for (size_t i = 1; i + 1 < a.size(); ++i) acc = acc + ops::exp(a[i]) * a[i + 1];
        return std::vector<Tensor>{acc, ops::tanh(acc)};
      },
      types);
}

TEST(FusionLimits, AClusterOverTheBufferLimitBecomesRunsWithinIt) {
  const ir::Graph g = wide_sum();
  std::unordered_set<const ir::Node*> eligible;
  for (const ir::NodePtr& n : g.nodes()) {
    if (!n->is_leaf() && lower::can_generate(*n)) eligible.insert(n.get());
  }
  const std::vector<lower::Cluster> whole =
      backends::common::form_clusters(g, eligible, backends::common::FusionSet::all(), lower::RowKernelRules{});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_GT(whole[0].inputs.size(), 30u);
  EXPECT_EQ(backends::common::within_buffer_limit(whole, 0).size(), 1u);  // no limit
  const std::vector<lower::Cluster> runs = backends::common::within_buffer_limit(whole, 12);
  EXPECT_GT(runs.size(), 3u);
  // Every node in exactly one run, in the cluster's order; each run within the limit; the last run
  // yields the cluster's outputs, earlier runs the values later ones read.
  std::vector<const ir::Node*> order;
  for (const lower::Cluster& r : runs) {
    EXPECT_LE(r.inputs.size() + r.outputs.size(), 12u);
    EXPECT_FALSE(r.outputs.empty());
    for (const ir::NodePtr& n : r.nodes) order.push_back(n.get());
  }
  std::vector<const ir::Node*> expected;
  for (const ir::NodePtr& n : whole[0].nodes) expected.push_back(n.get());
  EXPECT_EQ(order, expected);
  for (size_t i = 0; i + 1 < runs.size(); ++i) {
    for (const ir::Value& v : runs[i].outputs) {
      bool read_later = std::find(whole[0].outputs.begin(), whole[0].outputs.end(), v) != whole[0].outputs.end();
      for (size_t j = i + 1; j < runs.size() && !read_later; ++j) {
        read_later = std::find(runs[j].inputs.begin(), runs[j].inputs.end(), v) != runs[j].inputs.end();
      }
      EXPECT_TRUE(read_later) << "run " << i << " yields a value nothing reads";
    }
  }
  const std::unordered_set<ir::Value, ir::ValueHash> last(runs.back().outputs.begin(), runs.back().outputs.end());
  for (const ir::Value& v : whole[0].outputs) EXPECT_EQ(last.count(v), 1u);
}

}  // namespace
}  // namespace tessera::test
