// The Executable contract on the CPU backend: run/run_into, outputs that are inputs or constants,
// multi-output nodes, scalars and empty tensors, non-contiguous and aliasing arrays, input errors
// that name the input, the plan cache, and the verification switch.
#include "op_samples.h"
#include "tessera/backends/verify.h"

namespace tessera::test {
namespace {

using backends::cpu::JitMode;

std::unique_ptr<backends::Executable> compile_cpu(const ir::Graph& g) {
  return backends::cpu_backend().compile(g);
}

TEST(CpuExecutable, OutputsThatAreInputsConstantsAndRepeats) {
  const Array c = Array::from_vector<float>({1, 2, 3}, {3});
  const ir::Graph g = trace(
      [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        const Tensor k = Tensor::from_array(c);
        const Tensor s = a[0] + k;
        return {a[0], k, s, s, ops::reshape(s, {1, 3}), a[0]};
      },
      {{DType::f32, {3}}});
  const Array x = Array::from_vector<float>({10, 20, 30}, {3});
  auto exe = compile_cpu(g);
  const std::vector<Array> out = exe->run({x});
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{10, 20, 30}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(out[3].to_vector<float>(), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(shape_str(out[4].shape()), "[1, 3]");
  EXPECT_EQ(out[5].to_vector<float>(), (std::vector<float>{10, 20, 30}));
  // As on the reference backend, run() hands back inputs and views of them without copying...
  EXPECT_TRUE(out[0].shares_storage_with(x));
  // ...while run_into copies into the caller's arrays.
  std::vector<Array> into;
  for (const Array& o : out) into.push_back(Array::zeros(o.dtype(), o.shape()));
  exe->run_into({x}, into);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(into[i].to_vector<float>(), out[i].to_vector<float>()) << i;
  EXPECT_FALSE(into[0].shares_storage_with(x));
}

TEST(CpuExecutable, MultiOutputNodesScalarsAndEmptyTensors) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        std::vector<Tensor> parts = ops::split(a[0], {1, 2}, 0);
        return {parts[1], parts[0] * a[1], a[1] * 3.0, ops::sum(a[2]), a[2] + 1.0};
      },
      {{DType::f32, {3, 2}}, {DType::f32, {}}, {DType::f32, {0, 4}}});
  const std::vector<Array> in = {Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2}), Array::scalar(2.0),
                                 Array::zeros(DType::f32, {0, 4})};
  for (JitMode mode : {JitMode::off, JitMode::always}) {
    ScopedJit jit(mode);
    auto exe = compile_cpu(g);
    const std::vector<Array> out = exe->run(in);
    EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{3, 4, 5, 6}));
    EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 4}));
    EXPECT_EQ(out[2].rank(), 0);
    EXPECT_EQ(out[2].item(), 6.0);
    EXPECT_EQ(out[3].item(), 0.0);
    EXPECT_EQ(shape_str(out[4].shape()), "[0, 4]");
  }
}

TEST(CpuExecutable, NonContiguousInputsAndOutputs) {
  const ir::Graph g =
      trace([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::matmul(a[0], a[1]) * 2.0}; },
            {{DType::f32, {3, 4}}, {DType::f32, {4, 2}}});
  const Array a = sample_array({DType::f32, {4, 3}}, 1, -1, 1).transpose(0, 1);  // a transposed view
  const Array b = strided_copy_of(sample_array({DType::f32, {4, 2}}, 2, -1, 1));
  ASSERT_FALSE(a.is_contiguous());
  ASSERT_FALSE(b.is_contiguous());
  const std::vector<Array> expected = backends::reference_backend().compile(g)->run({a, b});
  auto exe = compile_cpu(g);
  Array storage = Array::zeros(DType::f32, {2, 3});
  std::vector<Array> outs = {storage.transpose(0, 1)};  // a non-contiguous output
  exe->run_into({a, b}, outs);
  EXPECT_EQ(compare_arrays(expected[0], outs[0], 1e-5, 1e-5), "");
}

// A training loop may write the new parameters over the arrays it passed in.
TEST(CpuExecutable, OutputsMayShareMemoryWithInputs) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {ops::matmul(a[1], a[0]) + a[0], a[0] * 0.5};
      },
      {{DType::f32, {4, 4}}, {DType::f32, {4, 4}}});
  Array p = sample_array({DType::f32, {4, 4}}, 5, -1, 1);
  const Array w = sample_array({DType::f32, {4, 4}}, 6, -1, 1);
  const std::vector<Array> expected = backends::reference_backend().compile(g)->run({p.copy(), w});
  auto exe = compile_cpu(g);
  Array q = Array::empty(DType::f32, {4, 4});
  std::vector<Array> outs = {p, q};
  exe->run_into({p, w}, outs);
  EXPECT_EQ(compare_arrays(expected[0], p, 1e-5, 1e-5), "");
  EXPECT_EQ(compare_arrays(expected[1], q, 1e-6, 1e-6), "");
}

TEST(CpuExecutable, InputErrorsNameTheInput) {
  const ir::Graph g = trace([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {a[0] + a[1]}; },
                            {{DType::f32, {2, 3}}, {DType::f32, {3}}}, {"x", "bias"});
  auto exe = compile_cpu(g);
  const Array x = Array::zeros(DType::f32, {2, 3});
  EXPECT_TESSERA_ERROR(exe->run({x, Array::zeros(DType::f64, {3})}), "input 1", "bias", "f64[3]", "f32[3]");
  EXPECT_TESSERA_ERROR(exe->run({Array::zeros(DType::f32, {3, 2}), Array::zeros(DType::f32, {3})}), "input 0", "x",
                       "[3, 2]", "f32[2, 3]");
  EXPECT_TESSERA_ERROR(exe->run({x}), "takes 2 inputs", "1 were given");
  EXPECT_TESSERA_ERROR(exe->run({x, Array()}), "input 1", "undefined");
  std::vector<Array> bad = {Array::zeros(DType::f32, {3, 2})};
  EXPECT_TESSERA_ERROR(exe->run_into({x, Array::zeros(DType::f32, {3})}, bad), "output 0", "f32[2, 3]", "f32[3, 2]");
  std::vector<Array> none;
  EXPECT_TESSERA_ERROR(exe->run_into({x, Array::zeros(DType::f32, {3})}, none), "1 outputs", "0 arrays");
}

// Kernels that fail at run time (an index out of range in a reference kernel) report, and the
// executable stays usable.
TEST(CpuExecutable, RunTimeErrorsPropagate) {
  const ir::Graph g =
      trace([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::index_select(a[0], 0, a[1])}; },
            {{DType::f32, {3, 2}}, {DType::i64, {2}}});
  auto exe = compile_cpu(g);
  const Array x = sample_array({DType::f32, {3, 2}}, 1, -1, 1);
  EXPECT_TESSERA_ERROR(exe->run({x, Array::from_vector<int64_t>({0, 7}, {2})}), "index_select");
  EXPECT_EQ(exe->run({x, Array::from_vector<int64_t>({2, 0}, {2})})[0].to_vector<float>()[0], x.to_vector<float>()[4]);
}

TEST(CpuExecutable, PeakBytesIsKnownBeforeRunning) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        const Tensor h = ops::relu(ops::matmul(a[0], a[1]));
        return {ops::sum(ops::matmul(h, a[2]), {0})};
      },
      {{DType::f32, {32, 64}}, {DType::f32, {64, 128}}, {DType::f32, {128, 16}}});
  auto exe = compile_cpu(g);
  // The two intermediates (32x128 and 32x16 floats) need an arena; the result is written in place.
  EXPECT_GE(exe->peak_bytes(), 32 * 128 * 4);
  EXPECT_LE(exe->peak_bytes(), (32 * 128 + 32 * 16) * 4 + 128);
}

// The same structure compiled again (as eager loops do) reuses the plan, and constants are rebound.
TEST(CpuExecutable, PlanCacheReusesStructureAndRebindsConstants) {
  auto build = [](float shift) {
    const Tensor k = Tensor::from_array(Array::full(DType::f32, {4}, shift));
    return trace([k](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::exp(a[0]) + k}; },
                 {{DType::f32, {4}}});
  };
  backends::cpu::clear_plan_cache();
  const Array x = Array::zeros(DType::f32, {4});
  auto first = compile_cpu(build(1.0f));
  auto second = compile_cpu(build(5.0f));
  EXPECT_FALSE(backends::cpu::compile_info(*first).plan_cache_hit);
  EXPECT_TRUE(backends::cpu::compile_info(*second).plan_cache_hit);
  EXPECT_EQ(first->run({x})[0].to_vector<float>(), (std::vector<float>{2, 2, 2, 2}));
  EXPECT_EQ(second->run({x})[0].to_vector<float>(), (std::vector<float>{6, 6, 6, 6}));
  EXPECT_EQ(backends::cpu::plan_cache_size(), 1u);
  // A different shape is a different structure.
  auto other = compile_cpu(
      trace([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::exp(a[0])}; }, {{DType::f32, {5}}}));
  EXPECT_FALSE(backends::cpu::compile_info(*other).plan_cache_hit);
}

// Scalar constants the passes may rewrite on (x * 1 -> x) must not be confused with others.
TEST(CpuExecutable, PlanCacheDistinguishesRewrittenConstants) {
  auto build = [](double factor) {
    return trace([factor](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {a[0] * factor + 0.0}; },
                 {{DType::f32, {3}}});
  };
  backends::cpu::clear_plan_cache();
  const Array x = Array::from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ(compile_cpu(build(1.0))->run({x})[0].to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(compile_cpu(build(2.0))->run({x})[0].to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(compile_cpu(build(1.0))->run({x})[0].to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

// Generated kernels fold scalar constants into literals, so a plan whose kernels were made for one
// graph must not serve a graph of the same structure with another scalar there (no pass rewrites
// exp(x) * k, so nothing else tells the two apart). A device backend's split graphs met this: a small
// CPU segment of one graph matched another graph's, and ran with its constants.
TEST(CpuExecutable, PlanCacheDistinguishesScalarsInGeneratedKernels) {
  ScopedJit jit(JitMode::always);
  auto build = [](double k) {
    const Tensor c = Tensor::from_array(Array::scalar(k, DType::f32));
    return trace([c](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::exp(a[0]) * c}; },
                 {{DType::f32, {4}}});
  };
  backends::cpu::clear_plan_cache();
  const Array x = Array::zeros(DType::f32, {4});
  auto two = compile_cpu(build(2.0));
  auto two_again = compile_cpu(build(2.0));
  auto three = compile_cpu(build(3.0));
  ASSERT_TRUE(backends::cpu::compile_info(*two).jit_used);
  EXPECT_TRUE(backends::cpu::compile_info(*two_again).plan_cache_hit);  // equal values still share the plan
  EXPECT_EQ(two->run({x})[0].to_vector<float>(), (std::vector<float>{2, 2, 2, 2}));
  EXPECT_EQ(two_again->run({x})[0].to_vector<float>(), (std::vector<float>{2, 2, 2, 2}));
  EXPECT_EQ(three->run({x})[0].to_vector<float>(), (std::vector<float>{3, 3, 3, 3}));
}

// The passes fold cast(constant) into a new constant the plan keeps, however large: two graphs of the
// same structure with different weights must not share it. ONNX's DFT on Vulkan met this (its two
// f64 matrices cast to f32 in CPU segments of the split graph, the second given the first's values).
TEST(CpuExecutable, PlanCacheDistinguishesLargeFoldedConstants) {
  auto build = [](uint64_t seed) {
    const Tensor w = Tensor::from_array(random_array({10, 9}, seed, -1, 1, DType::f64));
    return trace([w](const std::vector<Tensor>&) -> std::vector<Tensor> { return {ops::cast(w, DType::f32)}; }, {});
  };
  backends::cpu::clear_plan_cache();
  const Array first = compile_cpu(build(1))->run({})[0];
  const Array second = compile_cpu(build(2))->run({})[0];
  EXPECT_EQ(first.to_vector<float>(), random_array({10, 9}, 1, -1, 1, DType::f64).astype(DType::f32).to_vector<float>());
  EXPECT_EQ(second.to_vector<float>(), random_array({10, 9}, 2, -1, 1, DType::f64).astype(DType::f32).to_vector<float>());
  // The same values still share the plan (the cache keeps the last plan of a structure).
  const auto again = compile_cpu(build(2));
  EXPECT_TRUE(backends::cpu::compile_info(*again).plan_cache_hit);
  EXPECT_EQ(again->run({})[0].to_vector<float>(), second.to_vector<float>());
  // A constant folded in one use and read where it lies in another still tells the plans apart.
  auto both = [](uint64_t seed) {
    const Tensor w = Tensor::from_array(random_array({10, 9}, seed, -1, 1, DType::f64));
    return trace([w](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {a[0] + ops::cast(w, DType::f32), a[1] * w}; },
                 {{DType::f32, {10, 9}}, {DType::f64, {10, 9}}});
  };
  const std::vector<Array> in = {Array::zeros(DType::f32, {10, 9}), Array::full(DType::f64, {10, 9}, 1.0)};
  for (uint64_t seed : {3, 4}) {
    const std::vector<Array> out = compile_cpu(both(seed))->run(in);
    const Array w = random_array({10, 9}, seed, -1, 1, DType::f64);
    EXPECT_EQ(out[0].to_vector<float>(), w.astype(DType::f32).to_vector<float>()) << seed;
    EXPECT_EQ(out[1].to_vector<double>(), w.to_vector<double>()) << seed;
  }
}

// Eager evaluation binds computed values (here a constant learning rate) as graph inputs; the plan
// cached for the first step must not keep that step's value (the passes could fold it otherwise).
TEST(CpuExecutable, CachedPlansDoNotKeepBoundInputValues) {
  backends::Backend& saved = backends::default_backend();
  backends::set_default_backend(backends::cpu_backend());
  for (JitMode mode : {JitMode::off, JitMode::always}) {
    ScopedJit jit(mode);
    const Tensor p = ops::full({4, 4}, 1.0);
    const Tensor g = ops::full({4, 4}, 1.0);
    for (double lr : {0.5, 0.25, 2.0}) {
      const Tensor step = Tensor::scalar(lr, DType::f64);
      const Tensor q = p - g * ops::cast(step, DType::f32) * 2.0;
      EXPECT_EQ(q.to_vector<float>()[5], static_cast<float>(1 - 2 * lr)) << "lr " << lr;
    }
  }
  backends::set_default_backend(saved);
}

TEST(CpuExecutable, EagerEvaluationOnTheCpuBackend) {
  const Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor b = Tensor::from_vector<float>({1, 0, 0, 1}, {2, 2});
  auto exe = backends::cpu_backend().compile(ir::Graph::build({}, {ops::matmul(a, b) + 1.0}));
  EXPECT_EQ(exe->run({})[0].to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
}

TEST(CpuVerify, ReportsErrorsPerOutput) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {ops::relu(ops::matmul(a[0], a[1])), ops::argmax(a[0], 1)};
      },
      {{DType::f32, {8, 16}}, {DType::f32, {16, 4}}});
  auto exe = compile_cpu(g);
  const std::vector<Array> in = {sample_array({DType::f32, {8, 16}}, 1, -1, 1),
                                 sample_array({DType::f32, {16, 4}}, 2, -1, 1)};
  backends::set_verify(true);
  const uint64_t before = backends::last_verify_report().sequence;
  exe->run(in);
  backends::set_verify(false);
  const backends::VerifyReport r = backends::last_verify_report();
  EXPECT_EQ(r.sequence, before + 1);
  EXPECT_EQ(r.backend, "cpu");
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[0].type, "f32[8, 4]");
  EXPECT_EQ(r.outputs[1].type, "i64[8]");
  EXPECT_LT(r.outputs[0].max_abs_error, 1e-5);
  EXPECT_LT(r.outputs[0].max_rel_error, 1e-4);
  EXPECT_EQ(r.outputs[1].max_abs_error, 0.0);
  // Off again: runs are not verified.
  exe->run(in);
  EXPECT_EQ(backends::last_verify_report().sequence, before + 1);
}

TEST(CpuVerify, CompareOutputsMeasuresAbsoluteAndRelativeError) {
  const Array e = Array::from_vector<double>({1.0, -2.0, 100.0, NAN}, {4});
  const Array a = Array::from_vector<double>({1.5, -2.0, 99.0, 1.0}, {4});
  const backends::OutputCheck c = backends::compare_outputs(e, a);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(c.max_rel_error, 0.5);
  EXPECT_EQ(c.nonfinite_mismatches, 1);
}

}  // namespace
}  // namespace tessera::test
