// quantized_matmul on the CPU backend runs the block kernels (tessera/kernels/quant), not the
// reference: the compiled step gives exactly what a direct kernel call gives, within the activation
// rounding of the exact definition, and stays on the reference kernel only where no block kernel fits.
#include "cpu_test_util.h"
#include "tessera/kernels/quant/interleave_x8.h"
#include "tessera/kernels/quant/quant_matmul.h"
#include "tessera/ops/quant.h"
#include "tessera/quant/quantize.h"

namespace tessera::test {
namespace {

struct Compiled {
  std::unique_ptr<backends::Executable> exe;
  backends::cpu::CompileInfo info;
};

Compiled compile_qmatmul(const Tensor& wq, const std::string& type, const ir::TensorType& x) {
  const ir::Graph g = trace(
      [&](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::quantized_matmul(a[0], wq, type)}; },
      {x});
  auto exe = backends::cpu_backend().compile(g);
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  return {std::move(exe), info};
}

TEST(CpuQuantizedMatmul, RunsTheBlockKernels) {
  const int64_t n = 72, k = 512;
  const Array w = random_array({n, k}, 1, -0.5, 0.5, DType::f32);
  for (const char* type : {"q4_0", "q4_1", "q5_0", "q8_0", "q2_k", "q4_k", "q6_k", "f16"}) {
    for (int64_t m : {1, 3, 9}) {
      SCOPED_TRACE(std::string(type) + " m=" + std::to_string(m));
      const Tensor wq = ops::quantize_weights(w, type);
      const Array x = random_array({m, k}, 2 + m, -1, 1, DType::f32);
      Compiled c = compile_qmatmul(wq, type, {DType::f32, {m, k}});
      EXPECT_EQ(c.info.fallback_steps, 0) << c.info.program;
      EXPECT_NE(c.info.program.find("quantized_matmul"), std::string::npos) << c.info.program;
      const Array got = c.exe->run({x})[0];
      // Bit for bit what the kernel gives when called directly. Constant Q4_0/Q8_0/Q4_K weights (72 rows,
      // a multiple of 8) are re-laid once into the x8 layout and use its kernels.
      const quant::GgmlType t = quant::parse_type(type);
      const bool x8 = kernels::quant::can_interleave_x8(t, n);
      EXPECT_EQ(c.info.program.find(" x8 ") != std::string::npos, x8) << c.info.program;
      std::vector<float> direct(static_cast<size_t>(m * n));
      if (x8) {
        std::vector<uint8_t> w8(static_cast<size_t>(wq.array().nbytes()));
        kernels::quant::interleave_x8(t, wq.array().data<const uint8_t>(), n, k, w8.data());
        kernels::quant::quantized_matmul_x8(t, w8.data(), n, k, x.data<const float>(), m, direct.data());
      } else {
        kernels::quant::quantized_matmul(t, wq.array().data<const uint8_t>(), n, k, x.data<const float>(), m,
                                         direct.data());
      }
      ASSERT_EQ(got.to_f64(), Array::from_vector(std::vector<double>(direct.begin(), direct.end()), {m, n}).to_f64());
      // And close to the exact definition: the activations' 8-bit rounding moves each output by a
      // small fraction of the row's scale.
      const Array exact = backends::reference_backend()
                              .compile(trace(
                                  [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                                    return {ops::quantized_matmul(a[0], wq, type)};
                                  },
                                  {{DType::f32, {m, k}}}))
                              ->run({x})[0];
      EXPECT_EQ(compare_arrays(exact, got, 0.05, 0.02), "");
    }
  }
}

TEST(CpuQuantizedMatmul, LeadingAxesFlattenIntoRows) {
  const Array w = random_array({16, 64}, 3, -1, 1, DType::f32);
  const Tensor wq = ops::quantize_weights(w, "q8_0");
  const Array x = random_array({2, 3, 64}, 4, -1, 1, DType::f32);
  Compiled c = compile_qmatmul(wq, "q8_0", {DType::f32, {2, 3, 64}});
  EXPECT_EQ(c.info.fallback_steps, 0) << c.info.program;
  const Array got = c.exe->run({x})[0];
  EXPECT_EQ(got.shape(), (Shape{2, 3, 16}));
  const Array flat = c.exe->run({x})[0].reshape({6, 16});
  Compiled rows = compile_qmatmul(wq, "q8_0", {DType::f32, {6, 64}});
  EXPECT_EQ(rows.exe->run({x.reshape({6, 64})})[0].to_f64(), flat.to_f64());
}

// Weights that arrive as graph inputs (no re-laying possible) use the kernels on the GGUF rows.
TEST(CpuQuantizedMatmul, WeightInputsUseTheRowKernels) {
  const int64_t n = 16, k = 256;
  const Tensor wq = ops::quantize_weights(random_array({n, k}, 7, -1, 1, DType::f32), "q4_k");
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::quantized_matmul(a[0], a[1], "q4_k")}; },
      {{DType::f32, {2, k}}, {DType::u8, wq.shape()}});
  auto exe = backends::cpu_backend().compile(g);
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  EXPECT_EQ(info.fallback_steps, 0) << info.program;
  EXPECT_EQ(info.program.find(" x8 "), std::string::npos) << info.program;
  const Array x = random_array({2, k}, 8, -1, 1, DType::f32);
  std::vector<float> direct(2 * n);
  kernels::quant::quantized_matmul(quant::GgmlType::q4_k, wq.array().data<const uint8_t>(), n, k, x.data<const float>(),
                                   2, direct.data());
  const Array got = exe->run({x, wq.array()})[0];
  EXPECT_EQ(got.to_f64(), Array::from_vector(std::vector<double>(direct.begin(), direct.end()), {2, n}).to_f64());
}

// One constant read by two products is re-laid once.
TEST(CpuQuantizedMatmul, SharedConstantWeightsAreReLaidOnce) {
  const Tensor wq = ops::quantize_weights(random_array({8, 64}, 9, -1, 1, DType::f32), "q4_0");
  const ir::Graph g = trace(
      [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {ops::quantized_matmul(a[0], wq, "q4_0"), ops::quantized_matmul(a[0] * 2.0, wq, "q4_0")};
      },
      {{DType::f32, {1, 64}}});
  auto exe = backends::cpu_backend().compile(g);
  const backends::common::Program& p = backends::cpu::program_of(*exe);
  int derived = 0;
  for (const backends::common::ConstantSource& c : p.constants) derived += c.derived_from >= 0 ? 1 : 0;
  EXPECT_EQ(derived, 1);
  const std::vector<Array> y = exe->run({random_array({1, 64}, 10, -1, 1, DType::f32)});
  EXPECT_EQ(compare_arrays((Tensor(y[0]) * 2.0).array(), y[1], 1e-5, 1e-5), "");
}

// Where the kernels do not apply the node keeps its exact reference kernel.
TEST(CpuQuantizedMatmul, OtherActivationTypesStayOnTheReference) {
  const Tensor wq = ops::quantize_weights(random_array({8, 32}, 5, -1, 1, DType::f32), "q8_0");
  Compiled c = compile_qmatmul(wq, "q8_0", {DType::f64, {2, 32}});
  EXPECT_EQ(c.info.fallback_steps, 1) << c.info.program;
  const Array x = random_array({2, 32}, 6, -1, 1, DType::f64);
  const Array exact = backends::reference_backend()
                          .compile(trace(
                              [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                                return {ops::quantized_matmul(a[0], wq, "q8_0")};
                              },
                              {{DType::f64, {2, 32}}}))
                          ->run({x})[0];
  EXPECT_EQ(compare_arrays(exact, c.exe->run({x})[0], 1e-12, 1e-12), "");
}

}  // namespace
}  // namespace tessera::test
