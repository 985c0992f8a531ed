// The CUDA kernels of LLM inference against the reference backend: quantized_matmul over every block
// type the GPU decodes (matvec launches, chunked with a tail, and the tensor-core path), dequantize bit
// for bit, kv_cache_attention (chunks of the online softmax, GQA, f16 caches, head sizes without
// 16-byte rows, bad positions), and index_copy writing a cache in place.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstring>
#include <functional>

#include "cuda/cuda_test_util.h"
#include "tessera/backends/common/convert_on_write.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/backends/cuda/narrow_activations.h"
#include "tessera/backends/cuda/steps.h"
#include "tessera/core/error.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/quant.h"

namespace tessera::test {
namespace {

const std::vector<std::string> kGpuTypes = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q4_k",
                                            "q5_k", "q6_k", "f16",  "bf16", "f32"};

const backends::cuda::CudaExecutable& whole_on_gpu(const backends::Executable& exe) {
  const auto* cu = dynamic_cast<const backends::cuda::CudaExecutable*>(&exe);
  if (cu == nullptr) throw Error("the graph was split: part of it runs on the CPU");
  return *cu;
}

std::string program_text(const backends::cuda::CudaExecutable& exe) {
  std::string text;
  for (const auto& step : exe.program().steps) text += step->describe() + "\n";
  return text;
}

TEST(CudaLlmKernels, QuantizedMatmulOverEveryDecodedType) {
  const int64_t n = 37, k = 512;  // an odd number of rows: a partly filled last block of warps
  const Array w = random_array({n, k}, 11, -0.5, 0.5, DType::f32);
  for (const std::string& type : kGpuTypes) {
    const Tensor wq = ops::quantize_weights(w, type);
    for (int64_t m : {1, 3, 8, 13, 40}) {  // 13: one launch of 8 rows and one of 5
      SCOPED_TRACE(type + " m=" + std::to_string(m));
      const ir::Graph g = trace(
          [&](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::quantized_matmul(a[0], wq, type)}; },
          {{DType::f32, {m, k}}});
      const Array x = random_array({m, k}, 20 + m, -1, 1, DType::f32);
      const auto exe = cuda().compile(g);
      const std::string program = program_text(whole_on_gpu(*exe));
      // A few rows are read by matvec launches in f32 (up to 4 beside float weights, 16 beside blocks);
      // longer products round the activations to f16 (bf16 beside bf16 weights) for the tensor cores.
      const bool float_weights = type == "f16" || type == "bf16" || type == "f32";
      const bool tensor_cores = m > (float_weights ? 4 : 16);
      EXPECT_NE(program.find(tensor_cores ? "product through" : "matvec"), std::string::npos) << program;
      const double tol = !tensor_cores ? 2e-4 : type == "bf16" ? 3e-2 : type == "f32" ? 2e-4 : 6e-3;
      const auto got = exe->run({x});
      const auto want = backends::reference_backend().compile(g)->run({x});
      expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), tol, tol);
    }
  }
}

TEST(CudaLlmKernels, LongProductsTakeActivationsRoundedByTheirProducer) {
  // The tensor cores multiply 16-bit activations: for a long product the rounding is a cast in the
  // graph (narrow_activations.h), fused into the kernel that makes x, so the program is that kernel and
  // the product (no pass of its own over x); a short product stays a matvec on f32 activations.
  const int64_t n = 96, k = 256;
  for (const std::string& type : {std::string("bf16"), std::string("q4_0")}) {
    const Tensor wq = ops::quantize_weights(random_array({n, k}, 61, -0.5, 0.5, DType::f32), type);
    for (int64_t m : {2, 64}) {
      SCOPED_TRACE(type + " m=" + std::to_string(m));
      const ir::Graph g = trace(
          [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
            return {ops::quantized_matmul(ops::relu(a[0]) * 2.0, wq, type)};
          },
          {{DType::f32, {m, k}}});
      int casts = 0;
      const ir::Graph narrowed = backends::cuda::narrow_product_activations(g);
      for (const ir::NodePtr& node : narrowed.nodes()) {
        if (node->op_name() == "cast") {
          ++casts;
          EXPECT_EQ(node->output_types()[0].dtype, type == "bf16" ? DType::bf16 : DType::f16);
        }
        if (node->op_name() == "quantized_matmul") {
          EXPECT_EQ(node->output_types()[0].dtype, DType::f32);
        }
      }
      EXPECT_EQ(casts, m > 16 ? 1 : 0);
      const auto exe = cuda().compile(g);
      const backends::cuda::CudaExecutable& cu = whole_on_gpu(*exe);
      if (m > 16) {
        EXPECT_EQ(cu.program().steps.size(), 2u) << program_text(cu);
      }
      const Array x = random_array({m, k}, 62 + m, -1, 1, DType::f32);
      const auto got = exe->run({x});
      const auto want = backends::reference_backend().compile(g)->run({x});
      const double tol = m <= 16 ? 2e-4 : type == "bf16" ? 3e-2 : 6e-3;
      expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), tol, tol);
    }
  }
}

TEST(CudaLlmKernels, QuantizedMatmulTakesTheBiasAndResidualAddsItFeeds) {
  // x @ W^T + bias + residual is one step (the adds are its fused tail) on the matvec and the
  // tensor-core paths; an add of a value the product also feeds elsewhere stays a step of its own.
  const int64_t n = 96, k = 256;
  const Array w = random_array({n, k}, 13, -0.5, 0.5, DType::f32);
  for (const std::string& type : {std::string("q4_0"), std::string("bf16")}) {
    const Tensor wq = ops::quantize_weights(w, type);
    for (int64_t m : {1, 6, 40}) {
      SCOPED_TRACE(type + " m=" + std::to_string(m));
      const ir::Graph g = trace(
          [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
            return {a[2] + (ops::quantized_matmul(a[0], wq, type) + a[1])};
          },
          {{DType::f32, {m, k}}, {DType::f32, {n}}, {DType::f32, {m, n}}});
      const std::vector<Array> in = {random_array({m, k}, 30 + m, -1, 1, DType::f32),
                                     random_array({n}, 31, -1, 1, DType::f32),
                                     random_array({m, n}, 32 + m, -1, 1, DType::f32)};
      const auto exe = cuda().compile(g);
      const backends::cuda::CudaExecutable& cu = whole_on_gpu(*exe);
      EXPECT_EQ(cu.program().steps.size(), 1u) << program_text(cu);
      const bool tensor_cores = m > (type == "bf16" ? 4 : 16);
      const std::string program = program_text(cu);
      if (!tensor_cores) {
        EXPECT_NE(program.find("+bias +residual"), std::string::npos) << program;
      }
      const double tol = !tensor_cores ? 2e-4 : type == "bf16" ? 3e-2 : 6e-3;
      const auto got = exe->run(in);
      const auto want = backends::reference_backend().compile(g)->run(in);
      expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), tol, tol);
    }
  }
}

TEST(CudaLlmKernels, QuantizedMatmulAppliesTheActivationOfItsBiasedProduct) {
  // GPT-2's gelu(x @ W^T + b) and a ReLU tail (TESSERA_CUDA_PRODUCT_ACTIVATIONS=1): one step on the
  // matvec and the tensor-core paths; a SiLU (not among the matvec's activations) stays a kernel of its own.
  const ScopedEnv on("TESSERA_CUDA_PRODUCT_ACTIVATIONS", "1");
  const int64_t n = 80, k = 256;
  const Array w = random_array({n, k}, 14, -0.5, 0.5, DType::f32);
  using Fn = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<std::string, Fn>> tails = {
      {"tanh-gelu", [](const Tensor& t) { return ops::gelu(t, true); }},
      {"relu", [](const Tensor& t) { return ops::relu(t); }},
      {"", [](const Tensor& t) { return ops::silu(t); }}};
  for (const std::string& type : {std::string("q8_0"), std::string("bf16")}) {
    const Tensor wq = ops::quantize_weights(w, type);
    for (const auto& tail : tails) {
      const std::string& name = tail.first;
      const Fn& act = tail.second;  // a plain reference: lambdas capture it (not a structured binding)
      for (int64_t m : {1, 3, 40}) {
        SCOPED_TRACE(type + " " + (name.empty() ? std::string("silu") : name) + " m=" + std::to_string(m));
        const ir::Graph g = trace(
            [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
              return {act(ops::quantized_matmul(a[0], wq, type) + a[1])};
            },
            {{DType::f32, {m, k}}, {DType::f32, {n}}});
        const std::vector<Array> in = {random_array({m, k}, 40 + m, -1, 1, DType::f32),
                                       random_array({n}, 41, -1, 1, DType::f32)};
        const auto exe = cuda().compile(g);
        const backends::cuda::CudaExecutable& cu = whole_on_gpu(*exe);
        const std::string program = program_text(cu);
        EXPECT_EQ(cu.program().steps.size(), name.empty() ? 2u : 1u) << program;
        const bool tensor_cores = m > (type == "bf16" ? 4 : 16);
        if (!tensor_cores && !name.empty()) {
          EXPECT_NE(program.find("+bias " + name), std::string::npos) << program;
        }
        const double tol = !tensor_cores ? 2e-4 : type == "bf16" ? 3e-2 : 6e-3;
        const auto got = exe->run(in);
        const auto want = backends::reference_backend().compile(g)->run(in);
        expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), tol, tol);
      }
    }
  }
}

TEST(CudaLlmKernels, DequantizeEqualsTheReferenceBitForBit) {
  const Array w = random_array({5, 768}, 12, -2, 2, DType::f32);
  for (const std::string& type : kGpuTypes) {
    SCOPED_TRACE(type);
    const Array blocks = ops::quantize_array(w, type);
    const ir::Graph g = trace(
        [&](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::dequantize(a[0], type)}; },
        {{DType::u8, blocks.shape()}});
    const auto exe = cuda().compile(g);
    whole_on_gpu(*exe);
    const Array got = exe->run({blocks})[0].to(host_device());
    const Array want = ops::dequantize_array(blocks, type);
    ASSERT_EQ(got.shape(), want.shape());
    const float* a = got.data<const float>();
    const float* b = want.data<const float>();
    int64_t differing = 0;
    for (int64_t i = 0; i < got.numel(); ++i) differing += a[i] != b[i] ? 1 : 0;
    EXPECT_EQ(differing, 0) << "of " << got.numel() << " values";
  }
}

struct AttentionCase {
  int64_t m, hq, hk, d, dv, rows;
  DType cache;
  DType pos;
  std::vector<int64_t> positions;
};

// Runs each case on CUDA and on the reference backend: the program must hold a step whose description
// contains `step`, and the outputs agree within `tol`.
void check_attention_cases(const std::vector<AttentionCase>& cases, const std::string& step, double tol,
                           uint64_t seed) {
  for (const AttentionCase& c : cases) {
    SCOPED_TRACE(fmt::format("m={} hq={} hk={} d={} dv={} rows={}", c.m, c.hq, c.hk, c.d, c.dv, c.rows));
    const Array q = random_array({c.m, c.hq, c.d}, seed, -1, 1, DType::f32);
    const Array k = random_array({c.rows, c.hk, c.d}, seed + 1, -1, 1, DType::f32).astype(c.cache);
    const Array v = random_array({c.rows, c.hk, c.dv}, seed + 2, -1, 1, DType::f32).astype(c.cache);
    const Array pos = Array::from_vector(c.positions, {c.m}).astype(c.pos);
    const ir::Graph g = trace(
        [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
          return {ops::kv_cache_attention(a[0], a[1], a[2], a[3])};
        },
        {{DType::f32, q.shape()}, {c.cache, k.shape()}, {c.cache, v.shape()}, {c.pos, pos.shape()}});
    const auto exe = cuda().compile(g);
    const std::string program = program_text(whole_on_gpu(*exe));
    EXPECT_NE(program.find(step), std::string::npos) << program;
    const auto got = exe->run({q, k, v, pos});
    const auto want = backends::reference_backend().compile(g)->run({q, k, v, pos});
    expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), tol, tol);
  }
}

TEST(CudaLlmKernels, KvCacheAttentionMatchesTheReference) {
  std::vector<AttentionCase> cases = {
      {1, 8, 2, 64, 64, 1600, DType::f16, DType::i64, {1500}},           // decode: two chunks of rows
      {1, 4, 4, 64, 64, 64, DType::f32, DType::i32, {0}},                // the first position only
      {5, 6, 3, 40, 24, 300, DType::f32, DType::i64, {7, 299, 0, 150, 1024 % 300}},  // rows not 16-byte
      {3, 4, 1, 128, 128, 2100, DType::f16, DType::i32, {2099, 1023, 1024}},  // chunk edges, one KV head
      {2, 16, 2, 64, 64, 600, DType::f16, DType::i64, {599, 3}},  // 8 heads per block: chunks of 512 rows
      {6, 4, 2, 64, 64, 64, DType::f32, DType::i32, {5, 0, 63, 7, 7, 30}},  // query tiles, positions in any order
  };
  AttentionCase prefill{37, 8, 2, 64, 64, 300, DType::f16, DType::i64, {}};  // 9 tiles of 4 queries and a tail
  for (int64_t i = 0; i < prefill.m; ++i) prefill.positions.push_back(100 + i);
  cases.push_back(prefill);
  check_attention_cases(cases, "kv_cache_attention", 1e-4, 31);
}

TEST(CudaLlmKernels, DecodeAttentionSplitsTheCacheRowsAcrossBlocks) {
  // One or two queries over a long cache: blocks split the rows and the last to finish combines them.
  // Positions in the first split only, across many, at the very end; GQA groups of 1, 4 and 8.
  check_attention_cases({{1, 32, 8, 64, 64, 2049, DType::f16, DType::i64, {2048}},
                         {1, 32, 8, 64, 64, 2049, DType::f16, DType::i64, {100}},
                         {2, 12, 12, 64, 64, 1030, DType::f32, DType::i32, {0, 1029}},
                         {1, 16, 2, 128, 128, 700, DType::f16, DType::i32, {513}}},
                        "row splits", 1e-4, 71);
  // Every run leaves the arrival counters at zero: run after run gives the same bits, and a bad
  // position gives zeros and the error flag without spoiling the next run.
  const int64_t rows = 1500, hq = 8, hk = 2, d = 64;
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::kv_cache_attention(a[0], a[1], a[2], a[3])}; },
      {{DType::f32, {1, hq, d}}, {DType::f16, {rows, hk, d}}, {DType::f16, {rows, hk, d}}, {DType::i64, {1}}});
  const Array q = random_array({1, hq, d}, 81, -1, 1, DType::f32);
  const Array k = random_array({rows, hk, d}, 82, -1, 1, DType::f32).astype(DType::f16);
  const Array v = random_array({rows, hk, d}, 83, -1, 1, DType::f32).astype(DType::f16);
  const Array at = Array::from_vector(std::vector<int64_t>{1234}, {1});
  const auto exe = cuda().compile(g);
  const Array first = exe->run({q, k, v, at})[0].to(host_device());
  for (int run = 0; run < 3; ++run) {
    const Array again = exe->run({q, k, v, at})[0].to(host_device());
    EXPECT_EQ(std::memcmp(first.data<const float>(), again.data<const float>(), first.nbytes()), 0) << "run " << run;
  }
  const Array bad = Array::from_vector(std::vector<int64_t>{rows}, {1});
  const Array zeros = exe->run({q, k, v, bad})[0].to(host_device());
  for (int64_t i = 0; i < zeros.numel(); ++i) ASSERT_EQ(zeros.data<const float>()[i], 0.0f) << i;
  EXPECT_THROW(exe->run({q, k, v, at}), Error);  // the flag of the bad run is reported by the next
  const Array after = exe->run({q, k, v, at})[0].to(host_device());
  EXPECT_EQ(std::memcmp(first.data<const float>(), after.data<const float>(), first.nbytes()), 0);
}

TEST(CudaLlmKernels, PrefillAttentionOnTheTensorCoresMatchesTheReference) {
  // 64 queries or more run the flash kernel: Q and the softmax weights are rounded to f16 for the
  // products, so the tolerance is f16's; every case still checks masking, GQA and the tails.
  std::vector<AttentionCase> cases;
  auto causal = [](int64_t m, int64_t hq, int64_t hk, int64_t d, int64_t rows, DType cache, int64_t first) {
    AttentionCase c{m, hq, hk, d, d, rows, cache, DType::i64, {}};
    for (int64_t i = 0; i < m; ++i) c.positions.push_back(first + i);
    return c;
  };
  cases.push_back(causal(64, 4, 1, 64, 64, DType::f16, 0));     // one tile of queries and keys, 4 heads a group
  cases.push_back(causal(200, 8, 2, 64, 400, DType::f16, 150));  // a query tail, keys past the prompt's start
  cases.push_back(causal(130, 4, 4, 128, 300, DType::f32, 0));   // head size 128 (32-key tiles), f32 cache
  cases.push_back(causal(96, 2, 1, 32, 97, DType::f16, 1));      // the last row of the cache is read
  cases.push_back(causal(128, 6, 2, 64, 600, DType::f16, 400));  // 3 heads a group (one per block), 9 tiles in flight
  cases.push_back(causal(100, 4, 2, 128, 260, DType::f16, 100));  // head size 128, f16: two stages of 32-key tiles
  AttentionCase scattered{70, 4, 2, 64, 64, 90, DType::f32, DType::i32, {}};  // positions in any order
  for (int64_t i = 0; i < scattered.m; ++i) scattered.positions.push_back((i * 37) % 90);
  cases.push_back(scattered);
  check_attention_cases(cases, "tensor cores", 4e-3, 41);
  // Two query heads of a KV group per block (TESSERA_CUDA_FLASH_HEADS=2; odd groups keep one).
  const ScopedEnv pairs("TESSERA_CUDA_FLASH_HEADS", "2");
  check_attention_cases(cases, "tensor cores", 4e-3, 43);
}

TEST(CudaLlmKernels, AttentionReadsQueriesWhoseRowsLieApart) {
  // The query heads of a stacked q/k projection: a slice whose rows are hq + hk heads apart. Both
  // kernels read it in place (no materialising copy in the program) and give the reference's values.
  const int64_t hq = 4, hk = 2, d = 64, rows = 160;
  for (int64_t m : {3, 128}) {
    SCOPED_TRACE(m);
    const ir::Graph g = trace(
        [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
          return {ops::kv_cache_attention(ops::slice(a[0], 1, 0, hq), a[1], a[2], a[3])};
        },
        {{DType::f32, {m, hq + hk, d}}, {DType::f16, {rows, hk, d}}, {DType::f16, {rows, hk, d}}, {DType::i64, {m}}});
    std::vector<int64_t> positions;
    for (int64_t i = 0; i < m; ++i) positions.push_back(rows - m + i);
    const std::vector<Array> in = {random_array({m, hq + hk, d}, 51, -1, 1, DType::f32),
                                   random_array({rows, hk, d}, 52, -1, 1, DType::f32).astype(DType::f16),
                                   random_array({rows, hk, d}, 53, -1, 1, DType::f32).astype(DType::f16),
                                   Array::from_vector(positions, {m})};
    const auto exe = cuda().compile(g);
    const std::string program = program_text(whole_on_gpu(*exe));
    EXPECT_EQ(program.find("materialise"), std::string::npos) << program;
    const auto got = exe->run(in);
    const auto want = backends::reference_backend().compile(g)->run(in);
    const double tol = m >= 64 ? 4e-3 : 1e-4;
    expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), tol, tol);
  }
}

TEST(CudaLlmKernels, APositionOutsideTheCacheIsReportedAtTheNextRun) {
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {ops::kv_cache_attention(a[0], a[1], a[2], a[3])};
      },
      {{DType::f32, {1, 2, 8}}, {DType::f32, {4, 2, 8}}, {DType::f32, {4, 2, 8}}, {DType::i64, {1}}});
  const auto exe = cuda().compile(g);
  const Array q = random_array({1, 2, 8}, 1, -1, 1, DType::f32);
  const Array kv = random_array({4, 2, 8}, 2, -1, 1, DType::f32);
  // Shape inference cannot see a run-time position; the kernel raises the flag and writes zeros.
  const Array out = exe->run({q, kv, kv, Array::from_vector<int64_t>({4}, {1})})[0].to(host_device());
  for (int64_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.data<const float>()[i], 0.0f);
  try {
    exe->run({q, kv, kv, Array::from_vector<int64_t>({3}, {1})});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kv_cache_attention position"), std::string::npos) << e.what();
  }
}

TEST(CudaLlmKernels, IndexCopyWritesTheCacheInPlace) {
  const Shape cache_shape{64, 2, 8};
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {ops::index_copy(a[0], 0, a[1], a[2])};
      },
      {{DType::f16, cache_shape}, {DType::i64, {3}}, {DType::f16, {3, 2, 8}}});
  const auto exe = cuda().compile(g, {{{0, 0}}});
  const Array start = random_array(cache_shape, 3, -1, 1, DType::f32).astype(DType::f16);
  Array cache = start.to(cuda().device());
  const void* where = cache.device_data();
  const Array rows = Array::from_vector<int64_t>({5, 63, 0}, {3});
  const Array src = random_array({3, 2, 8}, 4, -1, 1, DType::f32).astype(DType::f16);
  const auto out = exe->run({cache, rows, src});
  EXPECT_EQ(out[0].device_data(), where) << "the aliased output should be the input's memory";
  const auto want = backends::reference_backend().compile(g)->run({start, rows, src});
  expect_close(Tensor::from_array(cache.to(host_device())), want[0].to_f64(), 0, 0);
  const std::string program = program_text(whole_on_gpu(*exe));
  EXPECT_NE(program.find("index_copy 3 slices of 32 bytes"), std::string::npos) << program;
  // A repeated row is an error, reported at the next run.
  exe->run({cache, Array::from_vector<int64_t>({2, 9, 2}, {3}), src});
  cache.to(host_device());  // waits for that run, so that the next one sees its flag
  EXPECT_THROW(exe->run({cache, rows, src}), Error);
}

TEST(CudaLlmKernels, DecodeAttentionWritesTheNewCacheRows) {
  // A decode step's k' = index_copy(k_cache, pos, k), v' likewise, attention(q, k', v', pos): one step
  // (common/cache_appends.h) that writes the rows as it reads them, in place when the caches are
  // aliased and into copies when not; the result, and the caches, as the reference's. Row splits with
  // the position in a middle split, GQA groups split over several blocks, the first position, f32.
  const ScopedEnv on("TESSERA_CUDA_FOLD_CACHE_WRITES", "1");
  struct Case {
    int64_t hq, hk, d, rows, position;
    DType cache;
  };
  for (const Case& c : {Case{32, 8, 64, 2049, 1500, DType::f16}, Case{16, 1, 128, 700, 513, DType::f16},
                        Case{4, 4, 64, 64, 0, DType::f32}}) {
    SCOPED_TRACE(fmt::format("{} heads over {}, d {}, {} rows at {}", c.hq, c.hk, c.d, c.rows, c.position));
    const Shape cache_shape{c.rows, c.hk, c.d};
    const ir::Graph g = trace(
        [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
          const Tensor k = ops::index_copy(a[0], 0, a[2], ops::cast(a[4], c.cache));
          const Tensor v = ops::index_copy(a[1], 0, a[2], ops::cast(a[5], c.cache));
          return {ops::kv_cache_attention(a[3], k, v, a[2]), k, v};
        },
        {{c.cache, cache_shape}, {c.cache, cache_shape}, {DType::i64, {1}}, {DType::f32, {1, c.hq, c.d}},
         {DType::f32, {1, c.hk, c.d}}, {DType::f32, {1, c.hk, c.d}}});
    const Array k0 = random_array(cache_shape, 101, -1, 1, DType::f32).astype(c.cache);
    const Array v0 = random_array(cache_shape, 102, -1, 1, DType::f32).astype(c.cache);
    const std::vector<Array> rest = {Array::from_vector<int64_t>({c.position}, {1}),
                                     random_array({1, c.hq, c.d}, 103, -1, 1, DType::f32),
                                     random_array({1, c.hk, c.d}, 104, -1, 1, DType::f32),
                                     random_array({1, c.hk, c.d}, 105, -1, 1, DType::f32)};
    std::vector<Array> in = {k0, v0};
    in.insert(in.end(), rest.begin(), rest.end());
    const auto want = backends::reference_backend().compile(g)->run(in);
    for (const bool aliased : {true, false}) {
      SCOPED_TRACE(aliased ? "caches aliased" : "caches copied");
      const auto exe = aliased ? cuda().compile(g, {{{1, 0}, {2, 1}}}) : cuda().compile(g);
      const std::string program = program_text(whole_on_gpu(*exe));
      EXPECT_EQ(program.find("index_copy"), std::string::npos) << program;
      EXPECT_NE(program.find("writing the new cache rows"), std::string::npos) << program;
      Array k = k0.to(cuda().device()), v = v0.to(cuda().device());
      std::vector<Array> args = {k, v};
      args.insert(args.end(), rest.begin(), rest.end());
      const auto got = exe->run(args);
      if (aliased) {
        EXPECT_EQ(got[1].device_data(), k.device_data()) << "the key cache should be written in place";
      }
      expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), 1e-4, 1e-4);
      for (int i : {1, 2}) {
        EXPECT_EQ(got[static_cast<size_t>(i)].to(host_device()).astype(DType::f32).to_vector<float>(),
                  want[static_cast<size_t>(i)].astype(DType::f32).to_vector<float>())
            << "cache " << i;
      }
      if (!aliased) {
        EXPECT_EQ(k.to(host_device()).astype(DType::f32).to_vector<float>(), k0.astype(DType::f32).to_vector<float>())
            << "an input cache that is not aliased stays as it was";
      }
    }
  }
}

TEST(CudaLlmKernels, CacheRowsAreRoundedAsTheyAreWritten) {
  // index_copy(cache, rows, cast(k, cache type)): the cast folds into the write (convert_on_write.h),
  // one step, each value rounded to nearest even as the cast rounds; f32 rows into f16 and bf16 caches.
  for (DType cache_type : {DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(cache_type));
    const Shape cache_shape{40, 2, 8};
    const ir::Graph g = trace(
        [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
          return {ops::index_copy(a[0], 0, a[1], ops::cast(a[2] * 2.0, cache_type))};
        },
        {{cache_type, cache_shape}, {DType::i64, {3}}, {DType::f32, {3, 2, 8}}});
    int converts = 0;
    const ir::Graph folded = backends::common::convert_on_write(g, backends::cuda::index_copy_converts);
    for (const ir::NodePtr& n : folded.nodes()) {
      converts += n->op_name() == "index_copy" && n->attrs().get_bool_or("convert", false) ? 1 : 0;
    }
    EXPECT_EQ(converts, 1);
    const auto exe = cuda().compile(g);
    const std::string program = program_text(whole_on_gpu(*exe));
    EXPECT_EQ(program.find("cast"), std::string::npos) << program;
    const std::vector<Array> in = {random_array(cache_shape, 91, -1, 1, DType::f32).astype(cache_type),
                                   Array::from_vector<int64_t>({39, 0, 17}, {3}),
                                   random_array({3, 2, 8}, 92, -1, 1, DType::f32)};
    const Array got = exe->run(in)[0].to(host_device()).astype(DType::f32);
    const Array want = backends::reference_backend().compile(g)->run(in)[0].astype(DType::f32);
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
  }
}

}  // namespace
}  // namespace tessera::test
