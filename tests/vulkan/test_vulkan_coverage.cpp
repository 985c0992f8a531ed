// Which ops of the differential suite's samples the Vulkan backend still gives to the CPU (through the
// splitter), by name: an op counts as running on Vulkan when the backend supports it or when the
// splitter's decomposition of it (convolutions and pooling into gathers, products and scatters) runs
// there whole. The list is the backend's to-do list: an op that starts falling back, or one that no
// longer does, fails here until the list is updated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "op_samples.h"
#include "tessera/api/transforms.h"
#include "tessera/backends/vulkan/vulkan_backend.h"

namespace tessera::test {
namespace {

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : " ") + n;
  return s;
}

TEST(VulkanCoverage, NamesTheOpsThatStillFallBackToTheCpu) {
  std::set<std::string> seen, partly;
  int graphs = 0;
  for (const auto& samples : {elementwise_samples(), structural_samples(), nn_samples()}) {
    for (const Sample& s : samples) {
      ir::Graph g;
      try {
        g = trace(s.fn, s.inputs);
      } catch (const std::exception&) {
        continue;  // an optional sample whose op rejects these types
      }
      graphs += 1;
      for (const ir::NodePtr& n : g.nodes()) seen.insert(n->op_name());
      for (const std::string& op : backends::vulkan::vulkan_fallback_ops(g)) partly.insert(op);
    }
  }
  EXPECT_GT(graphs, 100);
  // An op falls back when no sample of it runs on Vulkan; `partly` also holds ops that fall back only
  // for some dtypes (f64) or attributes.
  std::set<std::string> falling_back = partly;
  for (const auto& samples : {elementwise_samples(), structural_samples(), nn_samples()}) {
    for (const Sample& s : samples) {
      ir::Graph g;
      try {
        g = trace(s.fn, s.inputs);
      } catch (const std::exception&) {
        continue;
      }
      const std::vector<std::string> lacking = backends::vulkan::vulkan_fallback_ops(g);
      for (const ir::NodePtr& n : g.nodes()) {
        if (std::find(lacking.begin(), lacking.end(), n->op_name()) == lacking.end()) falling_back.erase(n->op_name());
      }
    }
  }
  // What a device with 8/16-bit storage and shaderInt64 (lavapipe) leaves on the CPU today: the random
  // ops (quantized_matmul, dequantize, kv_cache_attention, arange and eye have shaders since the LLM
  // work; upsample and adaptive pooling decompose into products and index_selects).
  const std::set<std::string> expected = {"bernoulli", "normal", "permutation", "randint", "uniform"};
  RecordProperty("falling_back", joined(falling_back));
  std::printf("vulkan: ops falling back to the CPU (%zu): %s\n", falling_back.size(), joined(falling_back).c_str());
  EXPECT_EQ(joined(falling_back), joined(expected));
}

}  // namespace
}  // namespace tessera::test
