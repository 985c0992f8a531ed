// Regression tests for graphs where one add meets two matmuls or convolutions (issue: both products
// claimed the same add as their residual epilogue, so neither result was ever computed and lowering
// failed with "used before it was computed"). Each pattern runs in every float dtype, compiled on the
// CPU backend (fusion on and off, generated kernels on and off) and eagerly with the CPU backend as the
// default, against the reference backend.
#include "cpu_test_util.h"
#include "op_samples.h"
#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/internal_error.h"

namespace tessera::test {
namespace {

using backends::common::CompileOptions;
using backends::common::FusionSet;
using backends::common::ScopedCompileOptions;
using backends::cpu::JitMode;

class ScopedDefaultBackend {
 public:
  explicit ScopedDefaultBackend(backends::Backend& b) : saved_(&backends::default_backend()) {
    backends::set_default_backend(b);
  }
  ~ScopedDefaultBackend() { backends::set_default_backend(*saved_); }
  ScopedDefaultBackend(const ScopedDefaultBackend&) = delete;
  ScopedDefaultBackend& operator=(const ScopedDefaultBackend&) = delete;

 private:
  backends::Backend* saved_;
};

struct Pattern {
  std::string name;
  std::vector<Shape> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
};

std::vector<Pattern> patterns() {
  using V = const std::vector<Tensor>&;
  auto conv = [](const Tensor& x, const Tensor& w) { return ops::conv2d(x, w, {}, {1, 1}, {1, 1}); };
  return {
      {"x@a + y@b",
       {{2, 3}, {3, 2}, {2, 4}, {4, 2}},
       [](V v) { return ops::matmul(v[0], v[1]) + ops::matmul(v[2], v[3]); }},
      {"relu(x@a) + y@b",
       {{2, 3}, {3, 2}, {2, 4}, {4, 2}},
       [](V v) { return ops::relu(ops::matmul(v[0], v[1])) + ops::matmul(v[2], v[3]); }},
      {"(x@a + bias) + y@b",
       {{2, 3}, {3, 2}, {2, 4}, {4, 2}, {2}},
       [](V v) { return (ops::matmul(v[0], v[1]) + v[4]) + ops::matmul(v[2], v[3]); }},
      {"x@a + x@b", {{2, 3}, {3, 2}, {3, 2}}, [](V v) { return ops::matmul(v[0], v[1]) + ops::matmul(v[0], v[2]); }},
      {"x@a + x@a", {{2, 3}, {3, 2}}, [](V v) { return ops::matmul(v[0], v[1]) + ops::matmul(v[0], v[1]); }},
      {"x@a + c", {{2, 3}, {3, 2}, {2, 2}}, [](V v) { return ops::matmul(v[0], v[1]) + v[2]; }},
      {"three products in one sum",
       {{2, 3}, {3, 2}, {2, 4}, {4, 2}, {2, 5}, {5, 2}},
       [](V v) { return (ops::matmul(v[0], v[1]) + ops::matmul(v[2], v[3])) + ops::matmul(v[4], v[5]); }},
      {"conv(x,w1) + conv(x,w2)",
       {{1, 2, 5, 5}, {3, 2, 3, 3}, {3, 2, 3, 3}},
       [conv](V v) { return conv(v[0], v[1]) + conv(v[0], v[2]); }},
      {"relu(conv(x,w1)) + conv(x,w2)",
       {{1, 2, 5, 5}, {3, 2, 3, 3}, {3, 2, 3, 3}},
       [conv](V v) { return ops::relu(conv(v[0], v[1])) + conv(v[0], v[2]); }},
      {"conv + matmul",
       {{1, 2, 4, 4}, {2, 2, 3, 3}, {1, 2, 4, 3}, {3, 4}},
       [conv](V v) { return conv(v[0], v[1]) + ops::matmul(v[2], v[3]); }},
      {"transposed product + product",
       {{2, 3}, {3, 2}, {2, 4}, {4, 2}},
       [](V v) { return ops::transpose(ops::matmul(v[0], v[1])) + ops::matmul(v[2], v[3]); }},
  };
}

std::vector<Array> pattern_inputs(const Pattern& p, DType dtype) {
  std::vector<Array> inputs;
  for (size_t i = 0; i < p.inputs.size(); ++i) inputs.push_back(random_array(p.inputs[i], 31 + i, -1, 1, dtype));
  return inputs;
}

// The pattern's value and its gradient with respect to every input.
MultiFn value_and_gradients(const Pattern& p) {
  return [p](const std::vector<Tensor>& args) {
    auto loss = [p](const std::vector<Tensor>& a) {
      const Tensor y = p.fn(a);
      return ops::sum(y * Tensor::from_array(random_array(y.shape(), 97, -1, 1, y.dtype())));
    };
    std::vector<Tensor> out{p.fn(args)};
    for (const Tensor& g : grad(loss)(args)) out.push_back(g);
    return out;
  };
}

double tolerance(DType dt) {
  return dt == DType::bf16 ? 3e-2 : dt == DType::f16 ? 4e-3 : dt == DType::f64 ? 1e-10 : 1e-5;
}

const std::vector<DType> kDtypes = {DType::f32, DType::f64, DType::f16, DType::bf16};

TEST(CpuSharedEpilogue, EveryPatternCompilesAndMatchesTheReference) {
  const std::vector<CompileOptions> variants = {
      CompileOptions{}, CompileOptions{FusionSet::none(), {}},
      CompileOptions{FusionSet::all().without(backends::common::Fusion::epilogue), {}}};
  for (const Pattern& p : patterns()) {
    for (DType dt : kDtypes) {
      std::vector<ir::TensorType> types;
      for (const Shape& s : p.inputs) types.push_back({dt, s});
      const ir::Graph g = trace(value_and_gradients(p), types);
      const std::vector<Array> inputs = pattern_inputs(p, dt);
      for (const CompileOptions& options : variants) {
        for (JitMode jit : {JitMode::off, JitMode::always}) {
          ScopedCompileOptions scoped(options);
          ScopedJit scoped_jit(jit);
          expect_matches_reference(g, inputs,
                                   fmt::format("{} in {}, fusion {}, jit {}", p.name, dtype_name(dt),
                                               options.fusion.str(), jit == JitMode::off ? "off" : "on"),
                                   tolerance(dt));
        }
      }
    }
  }
}

TEST(CpuSharedEpilogue, EagerEvaluationOnTheCpuBackend) {
  for (const Pattern& p : patterns()) {
    for (DType dt : kDtypes) {
      std::vector<Tensor> args;
      for (const Array& a : pattern_inputs(p, dt)) args.push_back(Tensor::from_array(a));
      std::vector<Array> expected;
      {
        ScopedDefaultBackend ref(backends::reference_backend());
        for (const Tensor& t : value_and_gradients(p)(args)) expected.push_back(t.array());
      }
      ScopedDefaultBackend cpu(backends::cpu_backend());
      const std::vector<Tensor> got = value_and_gradients(p)(args);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(compare_arrays(expected[i], got[i].array(), tolerance(dt), tolerance(dt)), "")
            << p.name << " in " << dtype_name(dt) << ", output " << i;
      }
    }
  }
}

// The pattern's sum reads the product that did not take the add as a plain result: exactly one GEMM
// carries the residual, and both products run as library GEMMs.
TEST(CpuSharedEpilogue, OneProductTakesTheAddTheOtherFeedsIt) {
  const Pattern p = patterns()[0];
  std::vector<ir::TensorType> types;
  for (const Shape& s : p.inputs) types.push_back({DType::f32, s});
  const ir::Graph g = trace(one_output(p.fn), types);
  const auto exe = backends::cpu_backend().compile(g);
  const std::string program = backends::cpu::compile_info(*exe).program;
  size_t gemms = 0, residuals = 0;
  for (size_t pos = 0; (pos = program.find("sgemm", pos)) != std::string::npos; ++pos) ++gemms;
  for (size_t pos = 0; (pos = program.find("+residual", pos)) != std::string::npos; ++pos) ++residuals;
  EXPECT_EQ(gemms, 2u) << program;
  EXPECT_EQ(residuals, 1u) << program;
  const std::vector<Array> out = exe->run(pattern_inputs(p, DType::f32));
  const std::vector<Array> want = backends::reference_backend().compile(g)->run(pattern_inputs(p, DType::f32));
  EXPECT_EQ(compare_arrays(want[0], out[0], 1e-6, 1e-6), "");
}

// Multi-head attention with separate query/key/value inputs: its f32 gradient is the graph in which
// one tensor feeds several products.
TEST(CpuSharedEpilogue, MultiheadAttentionGradientCompiles) {
  ops::Generator gen(3);
  nn::MultiheadAttention mha(8, 2, true, gen);
  const Array q = random_array({2, 3, 8}, 1, -1, 1, DType::f32), k = random_array({2, 4, 8}, 2, -1, 1, DType::f32),
              v = random_array({2, 4, 8}, 3, -1, 1, DType::f32);
  auto f = [&](const std::vector<Tensor>& a) {
    auto loss = [&](const std::vector<Tensor>& x) { return ops::sum(ops::square(mha.forward(x[0], x[1], x[2]))); };
    return value_and_grad(loss)(a);
  };
  const ir::Graph g = trace(f, {{DType::f32, {2, 3, 8}}, {DType::f32, {2, 4, 8}}, {DType::f32, {2, 4, 8}}});
  for (JitMode jit : {JitMode::off, JitMode::always}) {
    ScopedJit scoped(jit);
    expect_matches_reference(g, {q, k, v}, "attention gradient", 2e-5);
  }
}

}  // namespace
}  // namespace tessera::test
