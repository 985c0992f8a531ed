// quantized_matmul and dequantize on the Vulkan backend, reading the GGUF rows where they lie
// (quant_shader.h). A product of up to kMaxMatvecRows activation rows (decode, short prefills) is one
// matvec dispatch that reads the weight once; longer products decode the weight transposed into f32
// scratch and multiply with the tiled matmul shader (matmul_shader.h). f32 activations only (those of
// the LLM graphs); other dtypes and formats go to the CPU.
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/common/epilogues.h"
#include "tessera/backends/common/quant_operands.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/matmul_shader.h"
#include "tessera/backends/vulkan/quant_matvec_wide.h"
#include "tessera/backends/vulkan/quant_shader.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/steps.h"
#include "tessera/backends/vulkan/vulkan_backend.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::backends::vulkan {

namespace {

using common::Lowering;
using common::Operand;
using quant::GgmlType;
using common::QuantOperands;

bool parse(const ir::Node& node, QuantOperands& q) {
  if (!common::parse_quant_operands(node, q)) return false;
  return vulkan_decodes(q.type, q.k) && fits_int_indexing(node);
}

// The bytes of a binding the shaders read as 32-bit words: whole words, else the device's bounds
// checks would hide the last row's last bytes. The extra bytes exist (device blocks are rounded up to a
// granule; inside the arena they belong to a neighbour and are only read).
uint64_t word_bytes(int64_t bytes) { return (static_cast<uint64_t>(bytes) + 3) / 4 * 4; }

bool claim_quantized_matmul(const ir::Node& node) {
  QuantOperands q;
  if (node.inputs().size() != 2 || node.input(0).dtype() != DType::f32 || node.input(1).rank() != 2) return false;
  if (!parse(node, q) || node.output_types()[0].numel() == 0) return false;
  const int64_t n = node.input(1).shape()[0], m = node.input(0).type().numel() / q.k;
  // A long product decodes the whole weight to f32 scratch, indexed with 32-bit ints.
  if (m > kMaxMatvecRows && (n * q.k >= INT32_MAX || !fits_one_binding(n * q.k * 4))) return false;
  return fits_one_binding(node.input(1).type().numel());
}

bool claim_dequantize(const ir::Node& node) {
  QuantOperands q;
  return node.inputs().size() == 1 && parse(node, q) && node.output_types()[0].numel() > 0 &&
         fits_one_binding(node.input(0).type().numel());
}

// The value packed at a 4-byte boundary (the shaders read the blocks as words): a copy when it is a
// view at an unaligned offset.
int32_t word_aligned(Lowering& L, int32_t id, DType dt) {
  const int32_t p = L.packed(id);
  if (L.operand(p).byte_offset % 4 == 0) return p;
  const int32_t t = L.temporary(dt, L.info(p).layout.shape);
  const common::CopyPlan plan = common::CopyPlan::make(L.info(p).layout, L.info(t).layout, dtype_size(dt));
  L.emit(L.steps().copy(plan, Operand{L.info(p).buffer, 0}, Operand{L.info(t).buffer, 0}, "quant operand alignment"),
         {p}, {t});
  return t;
}

// Whether matvecs reduce with subgroup operations: where the device has them in compute shaders, no
// wider than a weight row's lanes, unless TESSERA_VULKAN_SUBGROUPS=0 (the shared-memory path, which
// the tests also run on devices that have subgroups).
bool use_subgroups(const Context& ctx) {
  const char* env = std::getenv("TESSERA_VULKAN_SUBGROUPS");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  const Features& f = ctx.features();
  return f.subgroup_arithmetic && f.subgroup_size > 0 && f.subgroup_size <= static_cast<uint32_t>(kMatvecLanes);
}

// Whether a matvec of these rows takes the wide shader (quant_matvec_wide.h), unless
// TESSERA_VULKAN_MATVEC=old (the shader that reads a block per invocation step, for measuring both).
bool use_wide_matvec(const QuantOperands& q) {
  const char* env = std::getenv("TESSERA_VULKAN_MATVEC");
  if (env != nullptr && std::strcmp(env, "old") == 0) return false;
  return wide_matvec_takes(q.type, q.k);
}

// The wide matvec's lanes meet through subgroupShuffleXor where the device has it (and
// TESSERA_VULKAN_SUBGROUPS is not 0), else in shared memory.
bool use_shuffles(const Context& ctx) {
  const char* env = std::getenv("TESSERA_VULKAN_SUBGROUPS");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  return ctx.features().subgroup_shuffle;
}

// The matvec dispatch of up to kMaxMatvecRows activation rows: w, x, y, then the tail's bindings.
ShaderDispatch matvec_dispatch(Context& ctx, const QuantOperands& q, const MatvecTail& tail, std::string& how) {
  ShaderDispatch d;
  const std::string suffix = tail.suffix();
  const int rows = static_cast<int>(q.m);
  if (use_wide_matvec(q)) {
    WideMatvecShape shape = wide_matvec_shape(q.type, q.k, rows);
    shape.unroll = ctx.properties().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    const bool shuffles = use_shuffles(ctx);
    d.pipeline = ctx.pipelines().pipeline(
        quant_matvec_wide_glsl(q.type, q.k, rows, shape, shuffles, tail), 3 + tail.bindings(),
        fmt::format("quant_matvec_wide_{}_r{}_l{}_b{}{}{}{}", quant::type_name(q.type), q.m, shape.lanes,
                    shape.row_block, shuffles ? "_shuffles" : "", shape.unroll ? "" : "_rolled", suffix));
    d.groups = {library_groups(q.n, shape.rows_per_workgroup()), 1, 1};
    how = fmt::format("wide matvec, {} lanes a row, {} rows an invocation{}", shape.lanes, shape.row_block,
                      shuffles ? ", shuffled sums" : "");
  } else {
    const bool subgroups = use_subgroups(ctx);
    d.pipeline = ctx.pipelines().pipeline(
        quant_matvec_glsl(q.type, q.k, rows, subgroups, tail), 3 + tail.bindings(),
        fmt::format("quant_matvec_{}_r{}{}{}", quant::type_name(q.type), q.m, subgroups ? "_subgroups" : "", suffix));
    d.groups = {library_groups(q.n, kMatvecRowsPerGroup), 1, 1};
    how = subgroups ? "matvec, subgroup sums" : "matvec";
  }
  d.push = {static_cast<uint32_t>(q.n), static_cast<uint32_t>(q.k), static_cast<uint32_t>(q.row_bytes)};
  d.shift_word = kMatvecShiftWord;
  return d;
}

// The dispatch that decodes n rows of the weight into f32 at `y` ([n, k], or [k, n] when transposed).
ShaderDispatch dequantize_dispatch(Context& ctx, const QuantOperands& q, Operand w, Operand y, bool transposed) {
  ShaderDispatch d;
  d.pipeline = ctx.pipelines().pipeline(quant_dequantize_glsl(q.type, q.k, transposed), 2,
                                        fmt::format("dequantize_{}{}", quant::type_name(q.type), transposed ? "_t" : ""));
  d.bindings = {{w, word_bytes(q.n * q.row_bytes), false, 4},
                {y, static_cast<uint64_t>(q.n * q.k) * 4, true, 4}};
  d.push = {static_cast<uint32_t>(q.n), static_cast<uint32_t>(q.k), static_cast<uint32_t>(q.row_bytes)};
  d.shift_word = kDequantizeShiftWord;
  d.groups = {library_groups(q.n * (q.k / decode_group(q.type, q.k))), 1, 1};
  return d;
}

// The bias and residual bindings of a fused tail, in the order the shaders declare them.
std::vector<ShaderBinding> tail_bindings(const Lowering& L, const QuantOperands& q, int32_t bias, int32_t residual) {
  std::vector<ShaderBinding> b;
  if (bias >= 0) b.push_back({L.operand(bias), static_cast<uint64_t>(q.n) * 4, false, 4});
  if (residual >= 0) b.push_back({L.operand(residual), static_cast<uint64_t>(q.m * q.n) * 4, false, 4});
  return b;
}

bool lower_quantized_matmul(Lowering& L, const ir::NodePtr& node) {
  QuantOperands q;
  if (!claim_quantized_matmul(*node) || !parse(*node, q)) return false;
  q.n = node->input(1).shape()[0];
  q.m = node->input(0).type().numel() / q.k;
  const int32_t x = L.packed(L.value(node->input(0)));
  const int32_t w = word_aligned(L, L.value(node->input(1)), DType::u8);
  // A fused tail (common/epilogues.h with quantized_products): + bias [n], ReLU or tanh-GELU, then + a
  // residual.
  const common::Epilogue* epi = L.epilogue(*node);
  std::vector<int32_t> reads = {x, w};
  int32_t bias = -1, residual = -1;
  MatvecTail tail;
  if (epi != nullptr) {
    if (!common::gpu_tail_applies(epi->activation) || epi->post_activation != kernels::Activation::none) {
      throw common::LoweringFault(node.get(), "vulkan: a quantized product's tail with an activation it lacks");
    }
    tail.activation = epi->activation;
  }
  if (epi != nullptr && epi->bias.defined()) {
    bias = L.packed(L.value(epi->bias));
    reads.push_back(bias);
    tail.bias = true;
  }
  if (epi != nullptr && epi->residual.defined()) {
    residual = L.packed(L.value(epi->residual));
    reads.push_back(residual);
    tail.residual = true;
  }
  const int32_t y = L.produce(epi != nullptr ? epi->result : ir::Value(node, 0));
  Context& ctx = lowering_context();
  const std::string what =
      fmt::format("{} quantized_matmul {}x{}x{}{}", quant::type_name(q.type), q.m, q.n, q.k, tail.description());
  if (q.m <= kMaxMatvecRows) {
    std::string how;
    ShaderDispatch d = matvec_dispatch(ctx, q, tail, how);
    d.bindings = {{L.operand(w), word_bytes(q.n * q.row_bytes), false, 4},
                  {L.operand(x), static_cast<uint64_t>(q.m * q.k) * 4, false, 4},
                  {L.operand(y), static_cast<uint64_t>(q.m * q.n) * 4, true, 4}};
    for (const ShaderBinding& b : tail_bindings(L, q, bias, residual)) d.bindings.push_back(b);
    L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)}, what + " (" + how + ")"), reads,
           {y});
    return true;
  }
  // The weight decoded as the matmul shader's right operand [k, n], then y = x @ it.
  const int32_t scratch = L.scratch(q.n * q.k * 4);
  std::vector<ShaderDispatch> dispatches;
  dispatches.push_back(dequantize_dispatch(ctx, q, L.operand(w), Operand{scratch, 0}, /*transposed=*/true));
  const int block = matmul_block(q.m, q.n);
  const int64_t tile = matmul_tile(block);
  ShaderDispatch product;
  // The tiled shader applies the tail as it stores (matmul_shader.h: the bias and residual bindings after D).
  product.pipeline = ctx.pipelines().pipeline(matmul_glsl(DType::f32, block, false, false, tail), 3 + tail.bindings(),
                                              matmul_pipeline_name(DType::f32, block, false, false, tail));
  product.bindings = {{L.operand(x), static_cast<uint64_t>(q.m * q.k) * 4, false, 4},
                      {Operand{scratch, 0}, static_cast<uint64_t>(q.n * q.k) * 4, false, 4},
                      {L.operand(y), static_cast<uint64_t>(q.m * q.n) * 4, true, 4}};
  for (const ShaderBinding& b : tail_bindings(L, q, bias, residual)) product.bindings.push_back(b);
  product.push = {static_cast<uint32_t>(q.m), static_cast<uint32_t>(q.n), static_cast<uint32_t>(q.k), 0, 0};
  product.shift_word = kMatmulShiftWord;
  product.groups = {static_cast<uint32_t>((q.n + tile - 1) / tile), static_cast<uint32_t>((q.m + tile - 1) / tile), 1};
  dispatches.push_back(std::move(product));
  L.emit(std::make_unique<ShaderStep>(std::move(dispatches), what + " (decoded, tiled product)"), reads, {y},
         {scratch});
  return true;
}

bool lower_dequantize(Lowering& L, const ir::NodePtr& node) {
  QuantOperands q;
  if (!claim_dequantize(*node) || !parse(*node, q)) return false;
  q.n = node->input(0).type().numel() / q.row_bytes;
  const int32_t w = word_aligned(L, L.value(node->input(0)), DType::u8);
  const int32_t y = L.produce(ir::Value(node, 0));
  L.emit(std::make_unique<ShaderStep>(
             std::vector<ShaderDispatch>{dequantize_dispatch(lowering_context(), q, L.operand(w), L.operand(y), false)},
             fmt::format("dequantize {} rows of {} {}", q.n, q.k, quant::type_name(q.type))),
         {w}, {y});
  return true;
}

}  // namespace

void register_quant_lowerings(common::LoweringTable& table) {
  table["quantized_matmul"] = {lower_quantized_matmul, claim_quantized_matmul, true};
  table["dequantize"] = {lower_dequantize, claim_dequantize, true};
}

}  // namespace tessera::backends::vulkan
