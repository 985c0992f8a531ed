// The graph-level epilogue analysis (backends/common/epilogues.h) on quantized products: which tails a
// backend's limits let the product take.
#include <gtest/gtest.h>

#include "tessera/backends/common/epilogues.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/quant.h"
#include "test_util.h"

namespace tessera::test {
namespace {

using backends::common::EpilogueLimits;
using kernels::Activation;

// The epilogue of the graph's one quantized_matmul under `limits` (nullptr when it takes none).
std::optional<backends::common::Epilogue> quantized_tail(const ir::Graph& g, const EpilogueLimits& limits) {
  std::unordered_map<ir::Value, int64_t, ir::ValueHash> uses;
  for (const ir::NodePtr& n : g.nodes()) {
    for (const ir::Value& v : n->inputs()) ++uses[v];
  }
  for (const ir::Value& v : g.outputs()) ++uses[v];
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
  // tanh-GELU listed: bias, GELU and the residual after it.
  limits.quantized_activations = {Activation::relu, Activation::gelu_tanh};
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

}  // namespace
}  // namespace tessera::test
