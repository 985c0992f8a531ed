// The graph-level fusion analyses a backend opts into: epilogues of quantized products (which tails a
// backend's limits let the product take; backends/common/epilogues.h), and the cache writes a decode
// step's attention takes over (cache_appends.h), scheduled as one unit with it.
#include <gtest/gtest.h>

#include "tessera/backends/common/cache_appends.h"
#include "tessera/backends/common/epilogues.h"
#include "tessera/backends/common/fusion_plan.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/quant.h"
#include "test_util.h"

namespace tessera::test {
namespace {

using backends::common::EpilogueLimits;
using kernels::Activation;

// The epilogue of the graph's one quantized_matmul under `limits` (nullptr when it takes none).
std::unordered_map<ir::Value, int64_t, ir::ValueHash> count_uses(const ir::Graph& g) {
  std::unordered_map<ir::Value, int64_t, ir::ValueHash> uses;
  for (const ir::NodePtr& n : g.nodes()) {
    for (const ir::Value& v : n->inputs()) ++uses[v];
  }
  for (const ir::Value& v : g.outputs()) ++uses[v];
  return uses;
}

std::optional<backends::common::Epilogue> quantized_tail(const ir::Graph& g, const EpilogueLimits& limits) {
  auto uses = count_uses(g);
  const auto found = backends::common::find_epilogues(
      g, [&](const ir::Value& v) { return uses[v]; }, backends::common::FusionSet::all(), limits);
  for (const auto& [node, e] : found) {
    if (node->op_name() == "quantized_matmul") return e;
  }
  return std::nullopt;
}

ir::Graph gelu_of_biased_product(const Tensor& wq) {
  return trace(
      [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {ops::gelu(ops::quantized_matmul(a[0], wq, "q8_0") + a[1], true) + a[2]};
      },
      {{DType::f32, {2, 64}}, {DType::f32, {16}}, {DType::f32, {2, 16}}});
}

TEST(Epilogues, QuantizedProductsTakeOnlyTheActivationsTheirBackendLists) {
  const Tensor wq = ops::quantize_weights(random_array({16, 64}, 3, -1, 1, DType::f32), "q8_0");
  const ir::Graph g = gelu_of_biased_product(wq);
  EpilogueLimits limits;
  limits.quantized_products = true;
  // No activations listed: the bias only; the GELU stays outside (and so does the residual after it).
  auto e = quantized_tail(g, limits);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->bias.defined());
  EXPECT_EQ(e->activation, Activation::none);
  EXPECT_FALSE(e->residual.defined());
  EXPECT_EQ(e->nodes.size(), 1u);
  // tanh-GELU listed (the GPU backends' list): bias, GELU and the residual after it.
  limits.quantized_activations = backends::common::kGpuTailActivations;
  EXPECT_TRUE(backends::common::gpu_tail_applies(Activation::none));
  EXPECT_TRUE(backends::common::gpu_tail_applies(Activation::gelu_tanh));
  EXPECT_FALSE(backends::common::gpu_tail_applies(Activation::gelu));
  e = quantized_tail(g, limits);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->activation, Activation::gelu_tanh);
  EXPECT_TRUE(e->residual.defined());
  EXPECT_EQ(e->nodes.size(), 3u);
  // A backend without a residual after the activation stops at the GELU.
  limits.residual_after_activation = false;
  e = quantized_tail(g, limits);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->activation, Activation::gelu_tanh);
  EXPECT_FALSE(e->residual.defined());
  EXPECT_EQ(e->nodes.size(), 2u);
  // The float products' list does not carry over: erf-GELU is not among the quantized ones.
  const ir::Graph erf = trace(
      [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {ops::gelu(ops::quantized_matmul(a[0], wq, "q8_0") + a[1], false)};
      },
      {{DType::f32, {2, 64}}, {DType::f32, {16}}});
  e = quantized_tail(erf, limits);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->activation, Activation::none);
}

// A decode step's attention over caches it writes first; `extra_reader` also reads the new key cache.
ir::Graph decode_attention(bool extra_reader) {
  return trace(
      [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        const Tensor k = ops::index_copy(a[0], 0, a[2], a[4]);
        const Tensor v = ops::index_copy(a[1], 0, a[2], a[5]);
        std::vector<Tensor> out = {ops::kv_cache_attention(a[3], k, v, a[2]), k, v};
        if (extra_reader) out.push_back(ops::sum(k));
        return out;
      },
      {{DType::f32, {16, 2, 8}}, {DType::f32, {16, 2, 8}}, {DType::i64, {1}}, {DType::f32, {1, 4, 8}},
       {DType::f32, {1, 2, 8}}, {DType::f32, {1, 2, 8}}});
}

TEST(CacheAppends, TheAttentionTakesTheWritesOnlyItAndTheOutputsRead) {
  const ir::Graph g = decode_attention(false);
  auto uses = count_uses(g);
  const auto count = [&](const ir::Value& v) { return uses[v]; };
  const auto all = [](const ir::Node&) { return true; };
  const backends::common::CacheAppendMap found = backends::common::find_cache_appends(g, count, all);
  ASSERT_EQ(found.size(), 1u);
  const auto& [attention, append] = *found.begin();
  EXPECT_EQ(attention->op_name(), "kv_cache_attention");
  EXPECT_EQ(append.keys, attention->input(1).node().get());
  EXPECT_EQ(append.values, attention->input(2).node().get());
  // The backend's choice, and a cache another node reads, leave the writes on their own.
  EXPECT_TRUE(backends::common::find_cache_appends(g, count, [](const ir::Node&) { return false; }).empty());
  const ir::Graph read = decode_attention(true);
  auto read_uses = count_uses(read);
  EXPECT_TRUE(backends::common::find_cache_appends(read, [&](const ir::Value& v) { return read_uses[v]; }, all).empty());

  // The writes join their attention's unit though they come first in the graph, and the units still
  // schedule: the attention's unit after the producers of every input of its nodes.
  backends::common::OwnerMap owners{{append.keys, attention}, {append.values, attention}};
  backends::common::Units units = backends::common::make_units(g, {}, owners, {}, false);
  const int unit = units.unit_of.at(attention);
  EXPECT_EQ(units.unit_of.at(append.keys), unit);
  EXPECT_EQ(units.unit_of.at(append.values), unit);
  const std::vector<ir::NodePtr>& nodes = units.units[static_cast<size_t>(unit)].nodes;
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes.back().get(), attention);
  const auto order = backends::common::schedule_units(g, std::move(units));
  ASSERT_TRUE(order.has_value());
}

}  // namespace
}  // namespace tessera::test
