// Composites that the CPU backend should run as single library calls: linear (one GEMM reading the
// weight transposed in place, with the bias in its epilogue) and ceil-mode pooling (the pool kernels,
// no reference fallback). Values against the reference backend.
#include "cpu_test_util.h"

namespace tessera::test {
namespace {

std::string fallbacks(const backends::cpu::CompileInfo& info) {
  std::string out;
  for (const std::string& op : info.fallback_ops) out += op + " ";
  return out;
}

TEST(CpuFusedLayers, LinearIsOneGemmWithTransposedWeightAndBias) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::relu(ops::linear(a[0], a[1], a[2]))}; },
      {{DType::f32, {2, 7, 16}}, {DType::f32, {24, 16}}, {DType::f32, {24}}});
  auto exe = backends::cpu_backend().compile(g);
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  EXPECT_EQ(fallbacks(info), "") << info.program;
  // One GEMM, m = 2 * 7 folded, B transposed in place, bias and relu in the epilogue.
  EXPECT_NE(info.program.find("sgemm 14x24x16 B^T +bias relu"), std::string::npos) << info.program;
  expect_matches_reference(g,
                           {random_array({2, 7, 16}, 1).astype(DType::f32),
                            random_array({24, 16}, 2).astype(DType::f32), random_array({24}, 3).astype(DType::f32)},
                           "linear");
}

TEST(CpuFusedLayers, CeilModePoolsRunOnThePoolKernels) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        const Tensor m = ops::max_pool2d(a[0], {2, 2}, {2, 2}, {0, 0}, {1, 1}, true);
        const Tensor v = ops::avg_pool2d(a[0], {3, 3}, {2, 2}, {1, 1}, true, true);
        const Tensor loss = ops::sum(ops::square(m)) + ops::sum(ops::square(v));
        std::vector<Tensor> out = grad([](const std::vector<Tensor>& x) {
          return ops::sum(ops::square(ops::max_pool2d(x[0], {2, 2}, {2, 2}, {0, 0}, {1, 1}, true))) +
                 ops::sum(ops::square(ops::avg_pool2d(x[0], {3, 3}, {2, 2}, {1, 1}, true, true)));
        })({a[0]});
        out.push_back(m);
        out.push_back(v);
        out.push_back(loss);
        return out;
      },
      {{DType::f32, {2, 3, 9, 7}}});
  auto exe = backends::cpu_backend().compile(g);
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  for (const char* step : {"max_pool2d 6x9x7 k2x2 s2x2 ceil", "avg_pool2d 6x9x7 k3x3 s2x2 ceil",
                           "max_pool2d_backward 6x9x7 k2x2 s2x2 ceil", "avg_pool2d_backward 6x9x7 k3x3 s2x2 ceil"}) {
    EXPECT_NE(info.program.find(step), std::string::npos) << step << "\n" << info.program;
  }
  EXPECT_EQ(fallbacks(info).find("pool"), std::string::npos) << fallbacks(info);
  expect_matches_reference(g, {random_array({2, 3, 9, 7}, 4).astype(DType::f32)}, "ceil-mode pools");
}

}  // namespace
}  // namespace tessera::test
