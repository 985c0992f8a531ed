// A depthwise convolution whose result only a 1x1 convolution reads (MobileNetV2's block: depthwise
// 3x3 + bias + ReLU, then the projection with its bias and residual), and with it the 1x1 expansion
// before it (whole inverted residual blocks), compiles to one step
// (kernels::conv2d_depthwise_pointwise_forward) where the kernels choose it, with constant weights
// (packed once) and with weights as inputs (packed per call); values against the reference backend,
// and with the fusion switched off the convolutions are separate steps again.
#include "cpu_test_util.h"
#include "tessera/backends/common/compile_options.h"
#include "tessera/kernels/cpu/conv.h"
#include "tessera/kernels/cpu/cpu_features.h"

namespace tessera::test {
// Named: a unity batch shares its anonymous namespace with the other CPU backend tests.
namespace depthwise_pointwise_fusion_test {

using backends::common::CompileOptions;
using backends::common::Fusion;
using backends::common::FusionSet;

// x [2, 48, 112, 112]: a depthwise result of 4.6 MiB on 112x112 planes, which the kernels fuse.
constexpr int64_t kBatch = 2, kChannels = 48, kSize = 112, kOut = 16;

std::vector<Tensor> block(const Tensor& x, const Tensor& wd, const Tensor& bd, const Tensor& wp, const Tensor& bp,
                          const Tensor& residual) {
  const Tensor mid = ops::relu(ops::conv2d(x, wd, bd, {1, 1}, {1, 1}, {1, 1}, kChannels));
  return {ops::conv2d(mid, wp, bp) + residual};
}

std::vector<Array> block_inputs() {
  return {random_array({kBatch, kChannels, kSize, kSize}, 1, -1, 1, DType::f32),
          random_array({kChannels, 1, 3, 3}, 2, -1, 1, DType::f32), random_array({kChannels}, 3, -1, 1, DType::f32),
          random_array({kOut, kChannels, 1, 1}, 4, -1, 1, DType::f32), random_array({kOut}, 5, -1, 1, DType::f32),
          random_array({kBatch, kOut, kSize, kSize}, 6, -1, 1, DType::f32)};
}

bool fused_here() {
  const kernels::Conv2dGeometry dw =
      kernels::make_conv2d_geometry(kBatch, kChannels, kSize, kSize, kChannels, 3, 3, 1, 1, 1, 1, 1, 1, kChannels);
  return kernels::conv2d_depthwise_pointwise_fuses(
      dw, kernels::make_conv2d_geometry(kBatch, kChannels, kSize, kSize, kOut, 1, 1));
}

TEST(CpuDepthwisePointwise, WeightsAsInputsRunAsOneStep) {
  if (!testing_cpu()) GTEST_SKIP() << "CPU backend steps";
  const ir::Graph g = trace([](const std::vector<Tensor>& a) { return block(a[0], a[1], a[2], a[3], a[4], a[5]); },
                            {{DType::f32, {kBatch, kChannels, kSize, kSize}},
                             {DType::f32, {kChannels, 1, 3, 3}},
                             {DType::f32, {kChannels}},
                             {DType::f32, {kOut, kChannels, 1, 1}},
                             {DType::f32, {kOut}},
                             {DType::f32, {kBatch, kOut, kSize, kSize}}});
  const std::string program = backends::cpu::compile_info(*backends::cpu_backend().compile(g)).program;
  EXPECT_EQ(program.find("then 1x1") != std::string::npos, fused_here()) << program;
  expect_matches_reference(g, block_inputs(), "depthwise + pointwise, weights as inputs");
}

// The whole block: x [2, 16, 112, 112] expanded to 48 channels (ReLU), the depthwise convolution, the
// projection back to 16 with x as the residual.
TEST(CpuDepthwisePointwise, ConstantWeightsArePackedOnceAndTheSwitchSplitsTheStep) {
  if (!testing_cpu()) GTEST_SKIP() << "CPU backend steps";
  const std::vector<Array> in = block_inputs();
  const Array we = random_array({kChannels, kOut, 1, 1}, 7, -1, 1, DType::f32);
  const Array be = random_array({kChannels}, 8, -1, 1, DType::f32);
  const ir::Graph g = trace(
      [&](const std::vector<Tensor>& a) {
        const Tensor expanded = ops::relu(ops::conv2d(a[0], Tensor::from_array(we), Tensor::from_array(be)));
        return block(expanded, Tensor::from_array(in[1]), Tensor::from_array(in[2]), Tensor::from_array(in[3]),
                     Tensor::from_array(in[4]), a[0]);
      },
      {{DType::f32, {kBatch, kOut, kSize, kSize}}});
  const std::vector<Array> inputs = {in[5]};
  std::string fused, apart;
  {
    backends::common::ScopedCompileOptions o(CompileOptions{});
    fused = backends::cpu::compile_info(*backends::cpu_backend().compile(g)).program;
    expect_matches_reference(g, inputs, "depthwise + pointwise, constant weights");
  }
  {
    backends::common::ScopedCompileOptions o(CompileOptions{FusionSet::all().without(Fusion::depthwise_pointwise), {}});
    apart = backends::cpu::compile_info(*backends::cpu_backend().compile(g)).program;
    expect_matches_reference(g, inputs, "depthwise + pointwise switched off");
  }
  if (fused_here()) {
    EXPECT_NE(fused.find("conv2d n2 16->48 112x112 k1x1 +bias +act then conv2d n2 48->48"), std::string::npos)
        << fused;
    EXPECT_NE(fused.find("then 1x1 ->16 +bias +residual (packed weights)"), std::string::npos) << fused;
  } else {
    EXPECT_EQ(fused.find("then 1x1"), std::string::npos) << fused;
  }
  EXPECT_EQ(apart.find("then 1x1"), std::string::npos) << apart;
}

}  // namespace depthwise_pointwise_fusion_test
}  // namespace tessera::test
