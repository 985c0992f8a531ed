// 2-D f32 convolutions and their two gradients on the Vulkan backend: one implicit-GEMM dispatch each
// (conv_shader.h), the forward pass with its bias and fused tail (ReLU or tanh-GELU, + a residual);
// a weight gradient whose few output tiles would leave the GPU idle over a long K (the images' positions)
// splits K over workgroups into partial sums that a second dispatch adds in order. What is not claimed
// here (other dtypes and ranks, groups > 1, indices past 31 bits) decomposes into im2col and products
// before the lowering (ops/conv_decompose.cpp).
#include <algorithm>

#include <fmt/format.h>

#include "tessera/backends/common/conv_geometry.h"
#include "tessera/backends/common/epilogues.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/conv_shader.h"
#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/matmul_shader.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/steps.h"

namespace tessera::backends::vulkan {

namespace {

using common::ConvProduct;
using common::Lowering;
using common::Operand;

// Workgroups a product should give the GPU before its K is split (a few per multiprocessor of a large
// GPU), and the least K a split sums (whole slices; shorter ones spend more on the partials than they save).
constexpr int64_t kWantedGroups = 256;
constexpr int64_t kLeastSplitK = 256;

// An operand of at least one element that fits one binding.
bool bindable(int64_t bytes) { return bytes > 0 && fits_one_binding(bytes); }

std::optional<kernels::Conv2dGeometry> shader_geometry(const ir::Node& node) {
  std::optional<kernels::Conv2dGeometry> g = common::f32_conv2d_geometry(node);
  if (!g || g->groups != 1 || !common::implicit_gemm_indices_fit(*g)) return std::nullopt;
  for (const ir::Value& in : node.inputs()) {
    if (!bindable(in.type().numel() * 4)) return std::nullopt;
  }
  if (!bindable(node.output_types()[0].numel() * 4)) return std::nullopt;
  return g;
}

bool claim_conv(const ir::Node& node) { return shader_geometry(node).has_value(); }

// K ranges for a weight gradient: enough workgroups for the GPU where the output tiles are few, each
// range whole slices of at least kLeastSplitK; 0 for no split.
int split_k(const common::GemmSides& s, int64_t tile) {
  const int64_t tiles = ((s.m + tile - 1) / tile) * ((s.n + tile - 1) / tile);
  int64_t splits = std::min((kWantedGroups + tiles - 1) / tiles, s.k / kLeastSplitK);
  // The partials must fit one binding and int indexing.
  while (splits >= 2 && (splits * s.m * s.n >= INT32_MAX || !bindable(splits * s.m * s.n * 4))) splits /= 2;
  if (splits < 2) return 0;
  const int64_t per = (s.k + splits - 1) / splits;
  return static_cast<int>((per + kMatmulSlice - 1) / kMatmulSlice * kMatmulSlice);
}

bool lower_conv(Lowering& L, const ir::NodePtr& node) {
  const std::optional<kernels::Conv2dGeometry> geometry = shader_geometry(*node);
  if (!geometry) return false;
  const kernels::Conv2dGeometry& g = *geometry;
  const ConvProduct kind = common::conv_product_of(*node);
  const common::GemmSides sides = common::implicit_gemm_sides(kind, g);
  Context& ctx = lowering_context();
  const int32_t a = L.packed(L.value(node->input(1))), b = L.packed(L.value(node->input(0)));
  std::vector<int32_t> reads = {a, b};
  std::vector<ShaderBinding> tail_bindings;
  MatvecTail tail;
  if (kind == ConvProduct::forward && node->inputs().size() == 3) {
    reads.push_back(L.packed(L.value(node->input(2))));
    tail.bias = true;
    tail_bindings.push_back({L.operand(reads.back()), static_cast<uint64_t>(g.out_channels) * 4, false, 4});
  }
  // The forward pass's fused tail (common/epilogues.h within the Vulkan limits: activation(v + bias),
  // then + a residual).
  const common::Epilogue* epi = kind == ConvProduct::forward ? L.epilogue(*node) : nullptr;
  if (epi != nullptr) {
    if (epi->bias.defined() || epi->post_activation != kernels::Activation::none ||
        !common::gpu_tail_applies(epi->activation)) {
      throw common::LoweringFault(node.get(), "vulkan: a convolution epilogue the shader's tail lacks");
    }
    tail.activation = epi->activation;
    if (epi->residual.defined()) {
      reads.push_back(L.packed(L.value(epi->residual)));
      tail.residual = true;
      tail_bindings.push_back(
          {L.operand(reads.back()), static_cast<uint64_t>(epi->residual.type().numel()) * 4, false, 4});
    }
  }
  const ir::Value out = epi != nullptr ? epi->result : ir::Value(node, 0);
  const int32_t d = L.produce(out);
  const int block = matmul_block(sides.m, sides.n);
  const int64_t tile = matmul_tile(block);
  const int k_split = kind == ConvProduct::weight_grad ? split_k(sides, tile) : 0;
  const int64_t splits = k_split > 0 ? (sides.k + k_split - 1) / k_split : 1;
  const uint64_t out_bytes = static_cast<uint64_t>(out.type().numel()) * 4;

  ShaderDispatch product;
  product.pipeline = ctx.pipelines().pipeline(
      conv_product_glsl(kind, g, block, k_split, tail), 3 + tail.bindings(),
      fmt::format("conv_{}_r{}{}{}", static_cast<int>(kind), block, k_split > 0 ? "_split" : "", tail.suffix()));
  const int32_t partials = k_split > 0 ? L.scratch(splits * sides.m * sides.n * 4) : -1;
  const Operand product_out = k_split > 0 ? Operand{partials, 0} : L.operand(d);
  product.bindings = {
      {L.operand(a), static_cast<uint64_t>(node->input(1).type().numel()) * 4, false, 4},
      {L.operand(b), static_cast<uint64_t>(node->input(0).type().numel()) * 4, false, 4},
      {product_out, k_split > 0 ? static_cast<uint64_t>(splits * sides.m * sides.n) * 4 : out_bytes, true, 4}};
  for (const ShaderBinding& t : tail_bindings) product.bindings.push_back(t);
  product.push = {static_cast<uint32_t>(sides.m), static_cast<uint32_t>(sides.n), static_cast<uint32_t>(sides.k), 0, 0};
  product.shift_word = kMatmulShiftWord;
  product.groups = {static_cast<uint32_t>((sides.n + tile - 1) / tile), static_cast<uint32_t>((sides.m + tile - 1) / tile),
                    static_cast<uint32_t>(splits)};
  std::vector<ShaderDispatch> dispatches;
  dispatches.push_back(std::move(product));
  if (k_split > 0) {
    ShaderDispatch sum;
    sum.pipeline = ctx.pipelines().pipeline(conv_split_sum_glsl(), 2, "conv_split_sum");
    sum.bindings = {{Operand{partials, 0}, static_cast<uint64_t>(splits * sides.m * sides.n) * 4, false, 4},
                    {L.operand(d), out_bytes, true, 4}};
    sum.push = {static_cast<uint32_t>(sides.m * sides.n), static_cast<uint32_t>(splits)};
    sum.shift_word = kSplitSumShiftWord;
    sum.groups = {library_groups(sides.m * sides.n), 1, 1};
    dispatches.push_back(std::move(sum));
  }
  const std::string what =
      fmt::format("{} {}{} (implicit gemm {}x{}x{}{})", common::conv_product_name(kind), common::conv_geometry_description(g),
                  tail.description(), sides.m, sides.n, sides.k, k_split > 0 ? fmt::format(", K in {} splits", splits) : "");
  L.emit(std::make_unique<ShaderStep>(std::move(dispatches), what), reads, {d},
         k_split > 0 ? std::vector<int32_t>{partials} : std::vector<int32_t>{});
  return true;
}

}  // namespace

void register_conv_lowerings(common::LoweringTable& table) {
  for (const char* op : {"conv", "conv_input_grad", "conv_weight_grad"}) table[op] = {lower_conv, claim_conv, true};
}

}  // namespace tessera::backends::vulkan
