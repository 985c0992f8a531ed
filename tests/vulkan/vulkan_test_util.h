#pragma once
// Helpers of the Vulkan suite: compile a graph for Vulkan, require that no part of it went to the CPU,
// and compare its outputs with the reference backend's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/backends/vulkan/executable.h"
#include "tessera/backends/vulkan/vulkan_backend.h"
#include "test_util.h"

namespace tessera::test {

inline backends::Backend& vulkan_under_test() { return backends::backend_by_name("vulkan"); }

// The ops of `g` that would go to the CPU, for failure messages.
inline std::string vulkan_missing_ops(const ir::Graph& g) {
  std::string s;
  for (const std::string& op : backends::vulkan::vulkan_fallback_ops(g)) s += " " + op;
  return s.empty() ? " (none)" : s;
}

// The descriptions of the steps g compiles to on Vulkan, one a line (which kernels ran), or a note
// that part of it went elsewhere.
inline std::string vulkan_step_descriptions(const ir::Graph& g) {
  const auto exe = vulkan_under_test().compile(g);
  const auto* vk = dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get());
  if (vk == nullptr) return "(not one Vulkan executable)";
  std::string steps;
  for (const auto& step : vk->program().steps) steps += step->describe() + "\n";
  return steps;
}

// Compiles g for Vulkan, expecting one Vulkan executable (no CPU segment), runs it on host inputs and
// compares every output with the reference's: |got - want| <= tol (1 + |want|), NaN and inf exactly.
// Returns the outputs (on the host).
inline std::vector<Array> expect_vulkan_matches(const ir::Graph& g, const std::vector<Array>& in, double tol) {
  const std::unique_ptr<backends::Executable> exe = vulkan_under_test().compile(g);
  EXPECT_NE(dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get()), nullptr)
      << "part of the graph went to the CPU; ops without a Vulkan route:" << vulkan_missing_ops(g);
  const std::vector<Array> got = exe->run(in);
  const std::vector<Array> want = backends::reference_backend().compile(g)->run(in);
  std::vector<Array> host;
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i) + " " + ir::type_str(g.outputs()[i].type()));
    host.push_back(got[i].to(host_device()));
    EXPECT_EQ(host.back().dtype(), want[i].dtype());
    expect_close(Tensor::from_array(host.back()), want[i].to_f64(), tol, tol);
  }
  return host;
}

}  // namespace tessera::test
