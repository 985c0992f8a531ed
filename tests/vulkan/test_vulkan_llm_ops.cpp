// The Vulkan backend's LLM shaders against the reference backend: quantized_matmul (the matvec of up to
// eight activation rows, with subgroup and with shared-memory sums, and the decoded tiled product of
// longer ones) and dequantize for every block format the shaders read, at ragged sizes; the formats
// they do not read still run (on the CPU) with the right values; kv_cache_attention over f32 and f16
// caches, grouped heads, positions spanning several chunks, and a position outside the cache;
// index_copy (the cache update) into a fresh result and over its input, with bad indices reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "tessera/api/transforms.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/ops/index.h"
#include "tessera/ops/nn.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/quant.h"
#include "vulkan/quant_test_util.h"
#include "vulkan/vulkan_test_util.h"

namespace tessera::test {
namespace {

// Every format the shaders decode, with a row length each takes (K-quants: multiples of 256).
struct QuantCase {
  const char* type;
  int64_t k;
};
constexpr QuantCase kDecodedTypes[] = {{"q4_0", 96},  {"q4_1", 64},  {"q5_0", 160}, {"q5_1", 96},
                                       {"q8_0", 224}, {"q4_k", 512}, {"q5_k", 256}, {"q6_k", 512},
                                       {"f16", 40},   {"bf16", 14},  {"f32", 37}};

TEST(VulkanLlmOps, QuantizedMatvecMatchesTheReferenceForEveryDecodedType) {
  const bool has_subgroups = backends::vulkan::vulkan_context()->features().subgroup_arithmetic;
  for (const QuantCase& c : kDecodedTypes) {
    SCOPED_TRACE(c.type);
    const int64_t n = 37;  // not a whole number of 4-row workgroups
    const Array w = quantized_weights(n, c.k, c.type, 3);
    for (bool subgroups : {true, false}) {
      if (subgroups && !has_subgroups) continue;
      SCOPED_TRACE(subgroups ? "subgroup sums" : "shared-memory sums");
      // The matvec's reduction is chosen when a graph compiles.
      const ScopedEnv sw("TESSERA_VULKAN_SUBGROUPS", subgroups ? "1" : "0");
      for (int64_t m : {1, 3, 8}) {
        SCOPED_TRACE("rows " + std::to_string(m));
        expect_vulkan_matches(product_graph(m, c.k, w, c.type), {random_array({m, c.k}, 5 + m, -1, 1, DType::f32), w},
                              2e-5);
      }
    }
  }
}

TEST(VulkanLlmOps, LongQuantizedProductsDecodeTheWeightForTheTiledProduct) {
  for (const QuantCase& c : kDecodedTypes) {
    SCOPED_TRACE(c.type);
    const Array w = quantized_weights(70, c.k, c.type, 4);
    expect_vulkan_matches(product_graph(13, c.k, w, c.type), {random_array({13, c.k}, 9, -1, 1, DType::f32), w},
                          2e-5);
  }
}

TEST(VulkanLlmOps, QuantizedProductsTakeBatchedAndTransposedActivations) {
  const Array w = quantized_weights(19, 64, "q8_0", 6);
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::quantized_matmul(a[0], a[2], "q8_0"),
                               ops::quantized_matmul(ops::transpose(a[1], 0, 1), a[2], "q8_0")};
  };
  const ir::Graph g = trace(f, {{DType::f32, {2, 3, 64}}, {DType::f32, {64, 5}}, {DType::u8, w.shape()}});
  expect_vulkan_matches(g, {random_array({2, 3, 64}, 1, -1, 1, DType::f32), random_array({64, 5}, 2, -1, 1, DType::f32), w},
                        2e-5);
}

TEST(VulkanLlmOps, DequantizeIsBitExactForEveryDecodedType) {
  for (const QuantCase& c : kDecodedTypes) {
    SCOPED_TRACE(c.type);
    // Rank 3, and rows picked by index_select first (the embedding lookup of the LLM graphs).
    const Array w = ops::quantize_array(random_array({2, 5, c.k}, 7, -3, 3, DType::f32), c.type);
    const std::string type = c.type;
    auto f = [type](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{ops::dequantize(a[0], type),
                                 ops::dequantize(ops::index_select(ops::reshape(a[0], {10, a[0].dim(2)}), 0, a[1]), type)};
    };
    const ir::Graph g = trace(f, {{DType::u8, w.shape()}, {DType::i64, {4}}});
    expect_vulkan_matches(g, {w, Array::from_vector<int64_t>({9, 0, 4, 4}, {4})}, 0);
  }
}

TEST(VulkanLlmOps, FormatsWithoutAShaderRunOnTheCpuWithTheRightValues) {
  backends::Backend& vk = vulkan_under_test();
  for (const char* type : {"q2_k", "q3_k"}) {
    SCOPED_TRACE(type);
    const Array w = quantized_weights(9, 256, type, 8);
    const ir::Graph g = product_graph(2, 256, w, type);
    for (const ir::NodePtr& n : g.nodes()) {
      if (n->op_name() == "quantized_matmul") {
        EXPECT_FALSE(vk.supports(*n));
      }
    }
    const std::vector<Array> in = {random_array({2, 256}, 1, -1, 1, DType::f32), w};
    const Array got = vk.compile(g)->run(in)[0].to(host_device());
    expect_close(Tensor::from_array(got), backends::reference_backend().compile(g)->run(in)[0].to_f64(), 1e-3, 1e-3);
  }
}

ir::Graph attention_graph(const Shape& q, const Shape& kv, DType q_dtype, DType cache, DType positions, double scale) {
  auto f = [scale](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::kv_cache_attention(a[0], a[1], a[2], a[3], scale > 0 ? std::optional<double>(scale)
                                                                                          : std::nullopt)};
  };
  return trace(f, {{q_dtype, q}, {cache, kv}, {cache, {kv[0], kv[1], kv[2] - 16}}, {positions, {q[0]}}});
}

TEST(VulkanLlmOps, KvCacheAttentionMatchesTheReference) {
  // 6 query heads over 2 KV heads, head dim 40 (values 24), 300 cache rows: positions in the first
  // chunk of 128 rows, across chunks and at the last row.
  const Shape q{4, 6, 40}, kv{300, 2, 40};
  for (DType cache : {DType::f32, DType::f16}) {
    for (DType q_dtype : {DType::f32, DType::f16}) {
      for (DType positions : {DType::i32, DType::i64}) {
        SCOPED_TRACE(std::string(dtype_name(cache)) + " cache, " + dtype_name(q_dtype) + " queries, " +
                     dtype_name(positions) + " positions");
        const ir::Graph g = attention_graph(q, kv, q_dtype, cache, positions, q_dtype == DType::f32 ? 0.0 : 0.3);
        const double tol = cache == DType::f16 || q_dtype == DType::f16 ? 4e-3 : 2e-5;
        expect_vulkan_matches(g,
                              {random_array(q, 1, -2, 2, q_dtype), random_array(kv, 2, -2, 2, cache),
                               random_array({300, 2, 24}, 3, -2, 2, cache),
                               Array::from_vector<int64_t>({0, 130, 299, 5}, {4}).astype(positions)},
                              tol);
      }
    }
  }
}

TEST(VulkanLlmOps, KvCacheAttentionReportsAPositionOutsideTheCache) {
  const ir::Graph g = attention_graph({2, 2, 24}, {10, 1, 24}, DType::f32, DType::f32, DType::i32, 0.0);
  const auto exe = vulkan_under_test().compile(g);
  const std::vector<Array> in = {random_array({2, 2, 24}, 1, -1, 1, DType::f32), random_array({10, 1, 24}, 2, -1, 1, DType::f32),
                                 random_array({10, 1, 8}, 3, -1, 1, DType::f32),
                                 Array::from_vector<int32_t>({3, 10}, {2})};
  try {
    exe->run(in);
    FAIL() << "a position past the cache's rows was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("position"), std::string::npos) << e.what();
  }
  // The executable stays usable.
  const std::vector<Array> good = {in[0], in[1], in[2], Array::from_vector<int32_t>({3, 9}, {2})};
  expect_close(Tensor::from_array(exe->run(good)[0].to(host_device())),
               backends::reference_backend().compile(g)->run(good)[0].to_f64(), 2e-5, 2e-5);
}

TEST(VulkanLlmOps, IndexCopyWritesRowsIntoACopyOrOverItsInput) {
  // Axis 0 of a cache-like [9, 2, 5] and axis 1 of a [3, 7, 2]; x is read again afterwards in the
  // first graph (so the result needs its own memory), not in the second.
  auto copied = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::index_copy(a[0], 0, a[1], a[2]), a[0] * 2.0,
                               ops::index_copy(a[3], 1, ops::cast(a[1], DType::i32), a[4])};
  };
  for (DType dt : {DType::f32, DType::f16}) {
    SCOPED_TRACE(dtype_name(dt));
    const ir::Graph g = trace(copied, {{dt, {9, 2, 5}}, {DType::i64, {3}}, {dt, {3, 2, 5}}, {dt, {3, 7, 2}}, {dt, {3, 3, 2}}});
    expect_vulkan_matches(g,
                          {random_array({9, 2, 5}, 1, -1, 1, dt), Array::from_vector<int64_t>({4, 0, 6}, {3}),
                           random_array({3, 2, 5}, 2, -1, 1, dt), random_array({3, 7, 2}, 3, -1, 1, dt),
                           random_array({3, 3, 2}, 4, -1, 1, dt)},
                          0);
  }
  // Written over its input across runs (the output aliases the input, as a decode step's cache).
  auto update = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::index_copy(a[0], 0, a[1], a[2])}; };
  const ir::Graph g = trace(update, {{DType::f32, {6, 4}}, {DType::i64, {2}}, {DType::f32, {2, 4}}});
  const auto exe = vulkan_under_test().compile(g, backends::CompileSpec{{{0, 0}}});
  Array cache = Array::zeros(DType::f32, {6, 4}).to(vulkan_under_test().device());
  for (int64_t step = 0; step < 3; ++step) {
    std::vector<Array> in = {cache, Array::from_vector<int64_t>({2 * step, 2 * step + 1}, {2}),
                             Array::full(DType::f32, {2, 4}, static_cast<double>(step + 1))};
    std::vector<Array> out = {cache};
    exe->run_into(in, out);
  }
  const std::vector<float> want = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
  EXPECT_EQ(cache.to(host_device()).to_vector<float>(), want);
  // A repeated index and one past the rows are reported.
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 6}}) {
    std::vector<Array> in = {cache, Array::from_vector<int64_t>(bad, {2}), Array::zeros(DType::f32, {2, 4})};
    std::vector<Array> out = {cache};
    EXPECT_THROW(exe->run_into(in, out), Error);
  }
}

TEST(VulkanLlmOps, DecodeAttentionWritesTheNewCacheRows) {
  // A decode step's k' = index_copy(k_cache, pos, k), v' likewise, attention(q, k', v', pos): one step
  // (common/cache_appends.h) whose shader writes the new rows; into copies of the caches, and in place
  // when they are aliased, across steps. GQA (4 query heads a KV head), f32 and f16 caches.
  for (DType cache : {DType::f32, DType::f16}) {
    SCOPED_TRACE(dtype_name(cache));
    const int64_t rows = 150, hq = 8, hk = 2, d = 16;
    const Shape cache_shape{rows, hk, d};
    auto step = [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
      const Tensor k = ops::index_copy(a[0], 0, a[2], ops::cast(a[4], cache));
      const Tensor v = ops::index_copy(a[1], 0, a[2], ops::cast(a[5], cache));
      return {ops::kv_cache_attention(a[3], k, v, a[2]), k, v};
    };
    const ir::Graph g = trace(step, {{cache, cache_shape}, {cache, cache_shape}, {DType::i64, {1}},
                                     {DType::f32, {1, hq, d}}, {DType::f32, {1, hk, d}}, {DType::f32, {1, hk, d}}});
    const std::string steps = vulkan_step_descriptions(g);
    EXPECT_EQ(steps.find("index_copy"), std::string::npos) << steps;
    EXPECT_NE(steps.find("writing the new cache rows"), std::string::npos) << steps;
    const Array k0 = random_array(cache_shape, 11, -1, 1, DType::f32).astype(cache);
    const Array v0 = random_array(cache_shape, 12, -1, 1, DType::f32).astype(cache);
    auto inputs = [&](const Array& k, const Array& v, int64_t position, uint64_t seed) {
      return std::vector<Array>{k, v, Array::from_vector<int64_t>({position}, {1}),
                                random_array({1, hq, d}, seed, -1, 1, DType::f32),
                                random_array({1, hk, d}, seed + 1, -1, 1, DType::f32),
                                random_array({1, hk, d}, seed + 2, -1, 1, DType::f32)};
    };
    // Copies: the outputs match the reference's, the first position, a middle one, the last row.
    for (int64_t position : {int64_t{0}, int64_t{77}, rows - 1}) {
      expect_vulkan_matches(g, inputs(k0, v0, position, static_cast<uint64_t>(20 + position)), 1e-5);
    }
    // In place across steps: the caches on the device, the outputs aliasing them.
    const auto exe = vulkan_under_test().compile(g, backends::CompileSpec{{{1, 0}, {2, 1}}});
    const auto ref = backends::reference_backend().compile(g);
    Array k = k0.to(vulkan_under_test().device()), v = v0.to(vulkan_under_test().device());
    Array k_want = k0, v_want = v0;
    for (int64_t position = 0; position < 5; ++position) {
      std::vector<Array> in = inputs(k, v, position, static_cast<uint64_t>(40 + 3 * position));
      std::vector<Array> out = {Array::empty(DType::f32, {1, hq, d}), k, v};
      exe->run_into(in, out);
      in[0] = k_want;
      in[1] = v_want;
      const std::vector<Array> want = ref->run(in);
      k_want = want[1];
      v_want = want[2];
      const std::vector<float> got = out[0].to(host_device()).to_vector<float>(), exact = want[0].to_vector<float>();
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], exact[i], 1e-5 * (1 + std::abs(exact[i]))) << i;
    }
    EXPECT_EQ(k.to(host_device()).astype(DType::f32).to_vector<float>(), k_want.astype(DType::f32).to_vector<float>());
    EXPECT_EQ(v.to(host_device()).astype(DType::f32).to_vector<float>(), v_want.astype(DType::f32).to_vector<float>());
  }
}

TEST(VulkanLlmOps, AnExactArangeAndEyeRunOnVulkanAndOthersOnTheCpu) {
  auto exact = [](const std::vector<Tensor>&) {
    return std::vector<Tensor>{ops::arange(0.5, 40.0, 0.75),
                               ops::arange(-3.0, 300.0, 2.0, DType::f16),
                               ops::arange(7),
                               ops::arange(100.0, -5.0, -7.0, DType::i32),
                               ops::eye(3, 5, 1),
                               ops::eye(4, 3, -1, DType::i64),
                               ops::eye(5, 5, 0, DType::f16)};
  };
  expect_vulkan_matches(trace(exact, {}), {}, 0);
  // A step that f32 arithmetic cannot reproduce exactly (0.1) goes to the CPU, with the right values.
  auto inexact = [](const std::vector<Tensor>&) { return std::vector<Tensor>{ops::arange(0.0, 3.0, 0.1)}; };
  const ir::Graph g = trace(inexact, {});
  for (const ir::NodePtr& n : g.nodes()) {
    if (n->op_name() == "arange") {
      EXPECT_FALSE(vulkan_under_test().supports(*n));
    }
  }
  EXPECT_EQ(vulkan_under_test().compile(g)->run({})[0].to(host_device()).to_vector<float>(),
            backends::reference_backend().compile(g)->run({})[0].to_vector<float>());
}

TEST(VulkanLlmOps, CacheRowsAreRoundedAsTheyAreWritten) {
  // index_copy(cache, rows, cast(k, cache type)), k a slice of a wider projection: the cast folds into
  // the write (common/convert_on_write.h), one step reading k where it lies, each value rounded to nearest even as the cast
  // rounds (ties and values past f16's range included); f32 rows into f16 and bf16 caches.
  for (DType cache_type : {DType::f16, DType::bf16}) {
    SCOPED_TRACE(dtype_name(cache_type));
    const ir::Graph g = trace(
        [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
          return {ops::index_copy(a[0], 0, a[1], ops::cast(ops::slice(a[2], 1, 1, 3), cache_type))};
        },
        {{cache_type, {40, 2, 8}}, {DType::i64, {3}}, {DType::f32, {3, 4, 8}}});
    Array rows = random_array({3, 4, 8}, 92, -30000, 30000, DType::f32);
    float* r = rows.data<float>();
    r[8] = 1.00048828125f;  // exactly halfway between two f16 values
    r[9] = 90000.0f;        // past f16's largest finite value
    const std::vector<Array> in = {random_array({40, 2, 8}, 91, -1, 1, DType::f32).astype(cache_type),
                                   Array::from_vector<int64_t>({39, 0, 17}, {3}), rows};
    expect_vulkan_matches(g, in, 0);
    const std::string steps = vulkan_step_descriptions(g);
    EXPECT_EQ(steps, fmt::format("vulkan index_copy 3 rows into {}[40, 2, 8]\n", dtype_name(cache_type)));
  }
}

TEST(VulkanLlmOps, QuantizedProductsAddTheirBiasAndResidualAsTheyStore) {
  // y = x W^T + b + r in the graph's order, for a matvec (3 rows) and a tiled product (12 rows); the
  // two adds must become part of the product's step (no step of their own).
  const Array w = quantized_weights(21, 64, "q4_0", 2);
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::quantized_matmul(a[0], a[1], "q4_0") + a[2] + a[3],
                               ops::quantized_matmul(a[4], a[1], "q4_0") + a[3]};
  };
  for (int64_t m : {3, 12}) {
    SCOPED_TRACE("rows " + std::to_string(m));
    const ir::Graph g =
        trace(f, {{DType::f32, {m, 64}}, {DType::u8, w.shape()}, {DType::f32, {21}}, {DType::f32, {m, 21}}, {DType::f32, {m, 64}}});
    expect_vulkan_matches(g,
                          {random_array({m, 64}, 1, -1, 1, DType::f32), w, random_array({21}, 2, -1, 1, DType::f32),
                           random_array({m, 21}, 3, -1, 1, DType::f32), random_array({m, 64}, 4, -1, 1, DType::f32)},
                          2e-5);
    const std::string steps = vulkan_step_descriptions(g);
    EXPECT_NE(steps.find("+bias +residual"), std::string::npos) << steps;
    EXPECT_EQ(steps.find("add"), std::string::npos) << "an add ran as a step of its own:\n" << steps;
  }
}

TEST(VulkanLlmOps, QuantizedProductsApplyTheActivationOfTheirBiasedProduct) {
  // GPT-2's gelu(x W^T + b), then a residual, and relu(x W^T + b): each one step (the activation in the
  // product's store) for the matvec (3 rows), the wide matvec (one row of 512) and the tiled product
  // (12 rows, in its tail dispatch), with the reference's values.
  for (const int64_t k : {64, 512}) {
    const Array w = quantized_weights(21, k, "q8_0", 5);
    auto f = [](const std::vector<Tensor>& a) {
      const Tensor y = ops::quantized_matmul(a[0], a[1], "q8_0");
      return std::vector<Tensor>{ops::gelu(y + a[2], true) + a[3]};
    };
    auto g_relu = [](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{ops::relu(ops::quantized_matmul(a[0], a[1], "q8_0") + a[2])};
    };
    for (int64_t m : {1, 3, 12}) {
      SCOPED_TRACE("k " + std::to_string(k) + ", rows " + std::to_string(m));
      const std::vector<Array> in = {random_array({m, k}, 1, -1, 1, DType::f32), w,
                                     random_array({21}, 2, -1, 1, DType::f32), random_array({m, 21}, 3, -1, 1, DType::f32)};
      const ir::Graph gelu =
          trace(f, {{DType::f32, {m, k}}, {DType::u8, w.shape()}, {DType::f32, {21}}, {DType::f32, {m, 21}}});
      expect_vulkan_matches(gelu, in, 2e-5);
      std::string steps = vulkan_step_descriptions(gelu);
      EXPECT_NE(steps.find("+bias tanh-gelu +residual"), std::string::npos) << steps;
      EXPECT_EQ(std::count(steps.begin(), steps.end(), '\n'), 1) << "the tail ran as steps of its own:\n" << steps;
      const ir::Graph relu = trace(g_relu, {{DType::f32, {m, k}}, {DType::u8, w.shape()}, {DType::f32, {21}}});
      expect_vulkan_matches(relu, {in[0], in[1], in[2]}, 2e-5);
      steps = vulkan_step_descriptions(relu);
      EXPECT_NE(steps.find("+bias relu"), std::string::npos) << steps;
    }
  }
}

TEST(VulkanLlmOps, AttentionAndTheCacheUpdateReadSlicesOfAStackedProjectionWhereTheyLie) {
  // q, k and v as slices of one [tokens, heads, dim] projection, as the decode graph has them: no
  // packed copies, the right values.
  auto f = [](const std::vector<Tensor>& a) {
    const Tensor q = ops::slice(a[0], 1, 0, 6), k = ops::slice(a[0], 1, 6, 8), v = ops::slice(a[0], 1, 7, 9);
    const Tensor kc = ops::index_copy(a[1], 0, a[3], k), vc = ops::index_copy(a[2], 0, a[3], v);
    return std::vector<Tensor>{ops::kv_cache_attention(q, kc, vc, a[3]), kc, vc};
  };
  const ir::Graph g =
      trace(f, {{DType::f32, {3, 9, 16}}, {DType::f32, {20, 2, 16}}, {DType::f32, {20, 2, 16}}, {DType::i64, {3}}});
  expect_vulkan_matches(g,
                        {random_array({3, 9, 16}, 1, -2, 2, DType::f32), random_array({20, 2, 16}, 2, -2, 2, DType::f32),
                         random_array({20, 2, 16}, 3, -2, 2, DType::f32), Array::from_vector<int64_t>({5, 6, 7}, {3})},
                        2e-5);
  const auto exe = vulkan_under_test().compile(g);
  const auto* vk = dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get());
  ASSERT_NE(vk, nullptr);
  for (const auto& step : vk->program().steps) {
    EXPECT_NE(step->kind(), backends::common::StepKind::copy) << step->describe();
  }
}

}  // namespace
}  // namespace tessera::test
