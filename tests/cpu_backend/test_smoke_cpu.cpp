#include "cpu_test_util.h"

namespace tessera::test {
namespace {

TEST(CpuSmoke, AddAndMatmul) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {ops::relu(ops::matmul(a[0], a[1]) + a[2]), a[0] * 2.0};
      },
      {{DType::f32, {4, 3}}, {DType::f32, {3, 5}}, {DType::f32, {5}}});
  const std::vector<Array> in = {random_array({4, 3}, 1, -1, 1, DType::f32), random_array({3, 5}, 2, -1, 1, DType::f32),
                                 random_array({5}, 3, -1, 1, DType::f32)};
  for (auto mode : {backends::cpu::JitMode::off, backends::cpu::JitMode::always}) {
    ScopedJit jit(mode);
    expect_matches_reference(g, in, "smoke");
  }
}

}  // namespace
}  // namespace tessera::test
