// Row kernels (loop_ir.h): a reduction and the elementwise use of its result over its own input in
// one kernel. Which clusters form (RMSNorm in one, LayerNorm and softmax in two: their second
// reduction's body uses the first's result, which one kernel does not chain yet; x - mean is
// recomputed by the second kernel, exp(x - max) stored by the first), the rule's limits (reduced
// axes innermost, rows of at most 16384 elements), the printed row phase, and values through the
// CPU JIT against the reference backend over row lengths around the vector and warp widths.
#include <limits>

#include "codegen_test_util.h"
#include "tessera/api/transforms.h"
#include "tessera/codegen/dialect.h"
#include "tessera/codegen/thread_mapping.h"
#include "tessera/ops/nn.h"

using namespace tessera;
using namespace tessera::test;

namespace {

ir::TensorType f32_type(const Shape& s) {
  return {DType::f32, s};
}

// Softmax and log_softmax as backends without a dedicated kernel decompose them (ops/nn_softmax.cpp).
Tensor softmax_decomposed(const Tensor& x) {
  const Tensor e = ops::exp(x - ops::max(x, {-1}, true));
  return e / ops::sum(e, {-1}, true);
}

Tensor log_softmax_decomposed(const Tensor& x) {
  const Tensor shifted = x - ops::max(x, {-1}, true);
  return shifted - ops::log(ops::sum(ops::exp(shifted), {-1}, true));
}

Tensor rms_norm_last(const Tensor& x, const Tensor& w) {
  return ops::rms_norm(x, {x.shape().back()}, w);
}

Tensor layer_norm_last(const Tensor& x, const Tensor& w, const Tensor& b) {
  return ops::layer_norm(x, {x.shape().back()}, w, b, 1e-5);
}

size_t row_kernels(const std::vector<lower::Cluster>& clusters) {
  size_t n = 0;
  for (const lower::Cluster& c : clusters) n += lower::build_loop_kernel(c).has_row_phase() ? 1 : 0;
  return n;
}

std::vector<lower::Cluster> clusters_of_fn(const MultiFn& fn, const std::vector<ir::TensorType>& types,
                                           lower::RowKernelRules rules = {}) {
  return cluster_all(trace(fn, types), false, rules);
}

// The CPU backend's rules: row kernels without chained reductions.
constexpr lower::RowKernelRules kUnchained{true, false};

MultiFn single_output(Tensor (*fn)(const Tensor&)) {
  return [fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; };
}

}  // namespace

TEST(RowKernels, RmsNormIsOneKernel) {
  const auto clusters = clusters_of_fn(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{rms_norm_last(in[0], in[1])}; },
      {f32_type({6, 64}), f32_type({64})});
  ASSERT_EQ(clusters.size(), 1u);
  const lower::Kernel k = lower::build_loop_kernel(clusters[0], "rms");
  ASSERT_TRUE(k.has_row_phase());
  ASSERT_EQ(k.reductions.size(), 1u);
  EXPECT_TRUE(k.epilogue_stores.empty());
  // The row phase reads the finished sum and loads x and the weight again.
  const std::string text = lower::print_kernel(k);
  EXPECT_NE(text.find("row:"), std::string::npos) << text;
  EXPECT_NE(text.find("reduced r0"), std::string::npos) << text;
  size_t row_loads = 0;
  for (const lower::Instr& in : k.row) row_loads += in.op == lower::Op::Load ? 1 : 0;
  EXPECT_EQ(row_loads, 2u) << text;
}

TEST(RowKernels, ChainedReductionsMakeLayerNormAndSoftmaxOneKernel) {
  // The second reduction (variance around the mean, sum of exp(x - max)) reads the first's finished
  // result: a chained walk of the same kernel.
  const auto ln = clusters_of_fn(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer_norm_last(in[0], in[1], in[2])}; },
      {f32_type({6, 64}), f32_type({64}), f32_type({64})});
  ASSERT_EQ(ln.size(), 1u);
  const lower::Kernel k = lower::build_loop_kernel(ln[0], "ln");
  ASSERT_EQ(k.chained.size(), 1u) << lower::print_kernel(k);
  ASSERT_EQ(k.reductions.size(), 2u);
  EXPECT_EQ(k.reductions[0].walk, 0);
  EXPECT_EQ(k.reductions[1].walk, 1);
  const std::string text = lower::print_kernel(k);
  EXPECT_NE(text.find("walk 1:"), std::string::npos) << text;
  EXPECT_NE(text.find("row:"), std::string::npos) << text;
  for (Tensor (*fn)(const Tensor&) : {&softmax_decomposed, &log_softmax_decomposed}) {
    const auto sm = clusters_of_fn(single_output(fn), {f32_type({6, 64})});
    ASSERT_EQ(sm.size(), 1u);
    EXPECT_EQ(lower::build_loop_kernel(sm[0]).chained.size(), 1u);
  }
  // A third reduction over values that use the second: two chained walks.
  const auto third = clusters_of_fn(
      [](const std::vector<Tensor>& in) {
        const Tensor c = in[0] - ops::mean(in[0], {1}, true);
        const Tensor d = c / ops::max(ops::abs(c), {1}, true);
        return std::vector<Tensor>{d - ops::mean(d, {1}, true)};
      },
      {f32_type({6, 64})});
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(lower::build_loop_kernel(third[0]).chained.size(), 2u);
}

TEST(RowKernels, UnchainedLayerNormAndSoftmaxTakeTwoKernelsEach) {
  // Without chained reductions (the CPU backend's rules): the first reduction alone, then the second
  // with the row phase.
  const auto ln = clusters_of_fn(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer_norm_last(in[0], in[1], in[2])}; },
      {f32_type({6, 64}), f32_type({64}), f32_type({64})}, kUnchained);
  // x - mean joins the variance's kernel (body and row phase), not the mean's row phase: nothing
  // of the row's size is stored between the two kernels.
  ASSERT_EQ(ln.size(), 2u);
  EXPECT_EQ(row_kernels(ln), 1u);
  EXPECT_EQ(ln[0].outputs.size(), 1u);
  EXPECT_EQ(ln[0].outputs[0].shape(), Shape({6, 1}));
  for (const MultiFn& fn :
       {MultiFn([](const std::vector<Tensor>& in) { return std::vector<Tensor>{softmax_decomposed(in[0])}; }),
        MultiFn([](const std::vector<Tensor>& in) { return std::vector<Tensor>{log_softmax_decomposed(in[0])}; })}) {
    const auto sm = clusters_of_fn(fn, {f32_type({6, 64})}, kUnchained);
    // exp(x - max) is a math call: the max's row phase stores it rather than the sum's kernel
    // computing it twice (fusion.cpp).
    ASSERT_EQ(sm.size(), 2u);
    EXPECT_EQ(row_kernels(sm), 2u);
    ASSERT_GE(sm[0].outputs.size(), 1u);
    EXPECT_EQ(sm[0].outputs.back().node()->op_name(), "exp");
  }
}

TEST(RowKernels, OnlyInnermostReducedAxesMakeRows) {
  // Batch-norm-like statistics over the outer axis: a kept innermost axis has no contiguous rows
  // (and on a GPU would leave the elementwise pass to one thread group per column): two kernels.
  const auto clusters = clusters_of_fn(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] - ops::mean(in[0], {0}, true)}; },
      {f32_type({32, 16})});
  EXPECT_EQ(clusters.size(), 2u);
  EXPECT_EQ(row_kernels(clusters), 0u);
  // Over the two inner axes of three: one row kernel.
  const auto inner = clusters_of_fn(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] - ops::mean(in[0], {1, 2}, true)}; },
      {f32_type({4, 6, 10})});
  EXPECT_EQ(inner.size(), 1u);
  EXPECT_EQ(row_kernels(inner), 1u);
}

TEST(RowKernels, RowsLongerThanTheLimitStayTwoKernels) {
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] / ops::sum(in[0], {1}, true)}; };
  EXPECT_EQ(clusters_of_fn(fn, {f32_type({2, 16384})}).size(), 1u);
  EXPECT_EQ(clusters_of_fn(fn, {f32_type({2, 16385})}).size(), 2u);
}

TEST(RowKernels, StatisticsUsedOutsideAreStoredByTheEpilogue) {
  // The mean is an output too (a training step keeps it): one kernel stores both.
  const auto clusters = clusters_of_fn(
      [](const std::vector<Tensor>& in) {
        const Tensor m = ops::mean(in[0], {1}, true);
        return std::vector<Tensor>{in[0] - m, m};
      },
      {f32_type({6, 40})});
  ASSERT_EQ(clusters.size(), 1u);
  const lower::Kernel k = lower::build_loop_kernel(clusters[0]);
  EXPECT_EQ(k.epilogue_stores.size(), 1u);
  EXPECT_EQ(k.row_stores.size(), 1u);
}

TEST(RowKernels, NormsAndSoftmaxMatchTheReferenceOverRowLengths) {
  // Row lengths around vector widths and warps; many short rows and few long ones. All shapes in one
  // graph: kernels of one shape-generic text share a compiled body.
  const int64_t lengths[] = {1, 3, 31, 32, 33, 1000, 4097};
  std::vector<Array> inputs;
  uint64_t seed = 40;
  for (int64_t n : lengths) {
    for (int64_t rows : {int64_t{1}, n < 100 ? int64_t{67} : int64_t{5}}) {
      inputs.push_back(random_of(DType::f32, {rows, n}, seed++, -4, 4));
      inputs.push_back(random_of(DType::f32, {n}, seed++, 0.5, 1.5));
      inputs.push_back(random_of(DType::f32, {n}, seed++, -1, 1));
    }
  }
  std::vector<ir::TensorType> types;
  for (const Array& a : inputs) types.push_back({a.dtype(), a.shape()});
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        std::vector<Tensor> outs;
        for (size_t i = 0; i < in.size(); i += 3) {
          outs.push_back(rms_norm_last(in[i], in[i + 1]));
          outs.push_back(layer_norm_last(in[i], in[i + 1], in[i + 2]));
          outs.push_back(softmax_decomposed(in[i]));
          outs.push_back(log_softmax_decomposed(in[i]));
        }
        return outs;
      },
      types);
  const std::vector<Array> want = run_reference(g, inputs);
  for (const lower::RowKernelRules rules : {lower::RowKernelRules{}, kUnchained}) {
    SCOPED_TRACE(rules.chain_reductions ? "chained" : "unchained");
    const JitRun jit = run_with_jit(g, inputs, 2, false, rules);
    expect_arrays_match(jit.outputs, want, 2e-5, 1e-6);
    // Rows of one element store through the epilogue: every other norm and softmax is a row kernel.
    EXPECT_GE(row_kernels(jit.clusters), (inputs.size() / 3 - 2) * 4);
  }
}

TEST(RowKernels, SeveralReducedAxesAndBroadcastOperands) {
  // Normalised over the two inner axes, scaled by a weight that varies along the middle one only:
  // the axes cannot merge, so the row phase loops over two axes.
  const Array x = random_of(DType::f32, {5, 6, 10}, 1, -2, 2), w = random_of(DType::f32, {6, 1}, 2, 0.5, 2);
  const auto clusters = check_against_reference(
      [](const std::vector<Tensor>& in) {
        const Tensor c = in[0] - ops::mean(in[0], {1, 2}, true);
        return std::vector<Tensor>{c * in[1] + (ops::max(in[0], {1, 2}, true) - in[0])};
      },
      {x, w}, 1e-6, 1e-6);
  ASSERT_EQ(clusters.size(), 1u);
  const lower::Kernel k = lower::build_loop_kernel(clusters[0]);
  EXPECT_TRUE(k.has_row_phase());
  size_t reduced_axes = 0;
  for (bool r : k.reduced) reduced_axes += r ? 1 : 0;
  EXPECT_EQ(reduced_axes, 2u) << lower::print_kernel(k);
}

TEST(RowKernels, NanInARowReachesEveryElement) {
  std::vector<float> v = random_of(DType::f32, {3, 50}, 9, -1, 1).to_vector<float>();
  v[60] = std::numeric_limits<float>::quiet_NaN();
  check_against_reference(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{softmax_decomposed(in[0])}; },
      {Array::from_vector<float>(v, {3, 50})}, 1e-6, 1e-7);
}

TEST(RowKernels, HalfRowsComputeInF32) {
  // bf16 activations as an LLM has them (the JIT's half types: the GPU backends fuse them).
  const Array x = random_of(DType::f32, {9, 300}, 3, -3, 3).astype(DType::bf16);
  const Array w = random_of(DType::f32, {300}, 4, 0.5, 1.5).astype(DType::bf16);
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{rms_norm_last(in[0], in[1]), softmax_decomposed(ops::cast(in[0], DType::f32))};
      },
      {{DType::bf16, {9, 300}}, {DType::bf16, {300}}});
  const JitRun jit = run_with_jit(g, {x, w}, 2, /*half_types=*/true);
  EXPECT_GE(row_kernels(jit.clusters), 2u);
  expect_arrays_match(jit.outputs, run_reference(g, {x, w}), 1e-2, 1e-3);
}

TEST(RowKernels, GradientsOfNormsStillMatch) {
  // The backward graphs broadcast reductions back too (sum(g * y) in softmax's vjp).
  const Array x = random_of(DType::f32, {7, 33}, 11, -2, 2), w = random_of(DType::f32, {33}, 12, 0.5, 1.5);
  const Array b = random_of(DType::f32, {33}, 13, -1, 1);
  check_against_reference(
      grad([](const std::vector<Tensor>& in) {
        const Tensor h = layer_norm_last(rms_norm_last(in[0], in[1]), in[1], in[2]);
        return ops::sum(softmax_decomposed(h) * ops::cos(h));
      }),
      {x, w, b}, 1e-4, 1e-6);
}

#if defined(TESSERA_HAVE_NVRTC) && defined(TESSERA_HAVE_CUDA)
#include <nvrtc.h>

#include <fstream>

#include "tessera/backends/cuda/launch.h"
#include "tessera/backends/cuda/loop_kernels.h"

TEST(RowKernels, CudaModuleOfDecoderRowsCompiles) {
  // The module the CUDA backend would compile for bf16 norms and softmaxes of a decoder at decode and
  // prefill sizes (a block per row, lanes per row, one thread per row), with the launch prologue;
  // TESSERA_ROW_KERNELS_CUDA_OUT=FILE also writes it out (for nvcc -arch=sm_90 --cubin).
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        std::vector<Tensor> outs;
        for (size_t i = 0; i < 3; ++i) {
          const Tensor& x = in[2 * i];
          outs.push_back(rms_norm_last(x, in[2 * i + 1]));
          outs.push_back(layer_norm_last(x, in[2 * i + 1], in[2 * i + 1]));
          outs.push_back(ops::cast(softmax_decomposed(ops::cast(x, DType::f32)), DType::bf16));
          outs.push_back(log_softmax_decomposed(ops::cast(x, DType::f32)));
        }
        return outs;
      },
      {{DType::bf16, {1, 2048}}, {DType::bf16, {2048}}, {DType::bf16, {64, 200}}, {DType::bf16, {200}},
       {DType::bf16, {5000, 12}}, {DType::bf16, {12}}});
  std::vector<lower::Kernel> kernels;
  size_t rows = 0;
  for (const lower::Cluster& c : cluster_all(g, /*half_types=*/true)) {
    kernels.push_back(lower::build_loop_kernel(c, fmt::format("k{}", kernels.size())));
    rows += kernels.back().has_row_phase() ? 1 : 0;
  }
  EXPECT_GE(rows, 9u);
  const std::string src = std::string(backends::cuda::kGridPrologueSource) + backends::cuda::loop_kernels_source(kernels);
  if (const char* out = std::getenv("TESSERA_ROW_KERNELS_CUDA_OUT")) std::ofstream(out) << src;
  nvrtcProgram prog;
  ASSERT_EQ(nvrtcCreateProgram(&prog, src.c_str(), "rows.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const std::string include = std::string("-I") + TESSERA_CUDA_INCLUDE_DIR;
  const char* options[] = {"--gpu-architecture=sm_90", include.c_str()};
  const nvrtcResult r = nvrtcCompileProgram(prog, 2, options);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  EXPECT_EQ(r, NVRTC_SUCCESS) << nvrtcGetErrorString(r) << "\n" << log;
  nvrtcDestroyProgram(&prog);
}
#endif

// RowKernelRules::max_row_elements (the CUDA backend's 256): a batch's log_softmax over rows of 10
// classes is one kernel; a decode step's or a prefill's 2,048-wide norm rows are left to separate
// kernels that spread each row over the GPU.
TEST(RowKernels, LongRowsStaySeparateKernelsUnderTheRowLimit) {
  const lower::RowKernelRules gpu{true, true, 256};
  const auto batch = clusters_of_fn(single_output(log_softmax_decomposed), {f32_type({64, 10})}, gpu);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(row_kernels(batch), 1u);
  const auto decode = clusters_of_fn(single_output(log_softmax_decomposed), {f32_type({1, 4096})}, gpu);
  EXPECT_GT(decode.size(), 1u);
  EXPECT_EQ(row_kernels(decode), 0u);
  auto rms = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{rms_norm_last(in[0], in[1])}; };
  EXPECT_EQ(row_kernels(clusters_of_fn(rms, {f32_type({64, 2048}), f32_type({2048})}, gpu)), 0u);
  EXPECT_EQ(row_kernels(clusters_of_fn(rms, {f32_type({64, 256}), f32_type({256})}, gpu)), 1u);
  // RowKernelRules::few_rows: a decode step's one long row (a LayerNorm: three passes) is one kernel whose
  // block walks the row (a whole block, not a warp, on a GPU), while a prefill's many stay separate.
  const lower::RowKernelRules few{true, true, 256, 8};
  auto ln = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer_norm_last(in[0], in[1], in[1])}; };
  const auto one = clusters_of_fn(ln, {f32_type({1, 768}), f32_type({768})}, few);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(row_kernels(one), 1u);
  const lower::Kernel k = lower::build_loop_kernel(one[0], "ln");
  EXPECT_EQ(codegen::reduction_group(k, codegen::cuda_dialect()), codegen::cuda_dialect().block_size);
  EXPECT_EQ(row_kernels(clusters_of_fn(ln, {f32_type({9, 768}), f32_type({768})}, few)), 0u);
  EXPECT_EQ(row_kernels(clusters_of_fn(ln, {f32_type({1, 768}), f32_type({768})}, gpu)), 0u);
}
