// adam_update on the Vulkan backend: every update of a graph that shares hyperparameters and the lr /
// step scalars (cpu::adam_group_key) runs in one shader over all its parameters, up to
// kAdamTensorsPerDispatch tensors a dispatch (their seven buffers each fill the device's binding
// slots; the start shifts go into push constants a byte each). lr and step stay f64 device scalars,
// read as two 32-bit words and converted in the shader, so one compiled step serves every training
// step and no device needs 64-bit float arithmetic; the bias corrections 1 - beta^t are computed as
// -expm1(t ln beta) in f32 (ln beta from the host in f64), which keeps their relative error near f32's
// rounding even at small t. Values are f32, or f16 stored and computed in f32.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tessera/backends/cpu/library_ops.h"  // adam_group_key, which is backend-neutral
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"

namespace tessera::backends::vulkan {

namespace {

using common::Lowering;

// 16 tensors take 2 + 7 * 16 + 1 = 115 bindings, whose byte-sized shifts fit the 32 push words.
constexpr int kAdamTensorsPerDispatch = 16;
constexpr int kAdamBuffersPerTensor = 7;  // p, g, m, v in; p, m, v out

struct AdamHyper {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled = false;
};

AdamHyper hyper_of(const ir::Node& node) {
  const ir::Attrs& a = node.attrs();
  return {a.get_float("beta1"), a.get_float("beta2"), a.get_float("eps"), a.get_float("weight_decay"),
          a.get_bool("decoupled")};
}

// A float literal that reads back as the nearest f32 of v.
std::string literal(double v) { return fmt::format("{:.9e}", static_cast<float>(v)); }

// 1 - beta^t, as -expm1(t ln beta); beta = 0 gives 1.
std::string correction(double beta) {
  return beta == 0.0 ? "1.0" : fmt::format("-expm1_small(t * {})", literal(std::log(beta)));
}

// The update of tensor k at its element j (the binding of its first buffer is 2 + 7k).
std::string tensor_update(int k, DType dtype, const AdamHyper& h) {
  const FloatStorage st = float_storage(dtype);
  const int b = 2 + kAdamBuffersPerTensor * k;
  const auto at = [&](const char* name, int slot) { return fmt::format("{}{}[shift_of({}) + j]", name, k, b + slot); };
  std::string code = fmt::format("      const float p = {};\n      float g = {};\n", st.load(at("p", 0)), st.load(at("g", 1)));
  if (!h.decoupled && h.weight_decay != 0.0) code += fmt::format("      g += {} * p;\n", literal(h.weight_decay));
  code += fmt::format("      const float m = {} * {} + {} * g;\n", literal(h.beta1), st.load(at("m", 2)), literal(1.0 - h.beta1));
  code += fmt::format("      const float v = {} * {} + {} * g * g;\n", literal(h.beta2), st.load(at("v", 3)), literal(1.0 - h.beta2));
  const std::string base = h.decoupled && h.weight_decay != 0.0 ? "p * decay" : "p";
  code += fmt::format("      {} = {};\n", at("po", 4), st.store(fmt::format("{} - m / (sqrt(v) * inv_sqrt_bc2 + {}) * step_size", base, literal(h.eps))));
  code += fmt::format("      {} = {};\n      {} = {};\n", at("mo", 5), st.store("m"), at("vo", 6), st.store("v"));
  return code;
}

std::string adam_glsl(const std::vector<ir::NodePtr>& nodes, const AdamHyper& h) {
  std::string buffers, branches;
  bool half = false;
  int64_t end = 0;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const DType dt = nodes[k]->input(0).dtype();
    half = half || dt == DType::f16;
    const std::string type = float_storage(dt).type;
    const int b = 2 + kAdamBuffersPerTensor * static_cast<int>(k);
    const char* names[] = {"p", "g", "m", "v", "po", "mo", "vo"};
    for (int slot = 0; slot < kAdamBuffersPerTensor; ++slot) {
      buffers += fmt::format("layout(std430, binding = {}) {} buffer TsrAdam{}{} {{ {} {}{}[]; }};\n", b + slot,
                             slot < 4 ? "readonly" : "writeonly", names[slot], k, type, names[slot], k);
    }
    const int64_t begin = end;
    end += nodes[k]->input(0).type().numel();
    branches += fmt::format("    {}if (i < {}) {{\n      const int j = i - {};\n{}    }}", k == 0 ? "" : "else ", end, begin,
                            tensor_update(static_cast<int>(k), dt, h));
    branches += k + 1 == nodes.size() ? "\n" : " ";
  }
  const int status = 2 + kAdamBuffersPerTensor * static_cast<int>(nodes.size());
  return fmt::format(R"(#version 450
{ext}// {kind} over {count} tensors ({total} elements): beta1 {beta1}, beta2 {beta2}, eps {eps}, weight decay {wd}.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrLr {{ uint lr_words[]; }};
layout(std430, binding = 1) readonly buffer TsrStep {{ uint step_words[]; }};
{buffers}{status}layout(push_constant) uniform TsrShifts {{ uint shift_bytes[32]; }};
int shift_of(int binding) {{ return int((shift_bytes[binding >> 2] >> (8 * (binding & 3))) & 0xffu); }}
// An f64 from its two little-endian words, rounded to f32 (sign, exponent and the top 44 mantissa bits).
float f64_value(uint lo, uint hi) {{
  const uint e = (hi >> 20) & 0x7ffu;
  const float sign = (hi >> 31) != 0u ? -1.0 : 1.0;
  if (e == 0u) return sign * 0.0;
  if (e == 0x7ffu) return ((hi & 0xfffffu) | lo) != 0u ? uintBitsToFloat(0x7fc00000u) : sign * uintBitsToFloat(0x7f800000u);
  const float mantissa = 1.0 + float(hi & 0xfffffu) * (1.0 / 1048576.0) + float(lo >> 8) * (256.0 / 4503599627370496.0);
  return sign * ldexp(mantissa, int(e) - 1023);
}}
// exp(x) - 1 without the cancellation of small x.
float expm1_small(float x) {{
  return abs(x) < 0.03 ? x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0)))) : exp(x) - 1.0;
}}
void main() {{
  const float lr = f64_value(lr_words[shift_of(0)], lr_words[shift_of(0) + 1]);
  const float t = f64_value(step_words[shift_of(1)], step_words[shift_of(1) + 1]);
  if (gl_GlobalInvocationID.x == 0 && !(t >= 1.0 && floor(t) == t)) report({bad_step}u);
  const float step_size = lr / ({bc1}), inv_sqrt_bc2 = inversesqrt({bc2});
  const float decay = 1.0 - lr * {wd_literal};
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < {total}; i += stride) {{
{branches}  }}
}}
)",
                     fmt::arg("ext", half ? storage_extensions(2) : ""), fmt::arg("kind", h.decoupled ? "AdamW" : "Adam"),
                     fmt::arg("count", nodes.size()), fmt::arg("total", end), fmt::arg("beta1", h.beta1),
                     fmt::arg("beta2", h.beta2), fmt::arg("eps", h.eps), fmt::arg("wd", h.weight_decay),
                     fmt::arg("buffers", buffers), fmt::arg("status", status_glsl(status)),
                     fmt::arg("bad_step", static_cast<uint32_t>(kStatusAdamStep)), fmt::arg("bc1", correction(h.beta1)),
                     fmt::arg("bc2", correction(h.beta2)), fmt::arg("wd_literal", literal(h.weight_decay)),
                     fmt::arg("branches", branches));
}

// How many tensors one dispatch may update on this device (its storage-buffer slots per stage).
int tensors_per_dispatch(const Context& context) {
  const VkPhysicalDeviceLimits& limits = context.properties().limits;
  const int64_t slots = std::min<int64_t>(limits.maxPerStageDescriptorStorageBuffers, limits.maxPerStageResources);
  return static_cast<int>(std::clamp<int64_t>((slots - 3) / kAdamBuffersPerTensor, 0, kAdamTensorsPerDispatch));
}

bool claim_adam(const ir::Node& node) {
  // An empty parameter has nothing to bind in a dispatch shared with others: the CPU updates nothing.
  if (node.inputs().size() != 6 || node.num_outputs() != 3 || !fits_int_indexing(node) ||
      node.input(0).type().numel() == 0) {
    return false;
  }
  const DType dt = node.input(0).dtype();
  if (!library_float(dt)) return false;
  for (size_t i = 1; i < 4; ++i) {
    if (node.input(i).dtype() != dt) return false;
  }
  for (size_t i = 4; i < 6; ++i) {
    if (node.input(i).dtype() != DType::f64 || node.input(i).rank() != 0) return false;
  }
  return true;
}

void lower_adam_group(Lowering& L, const std::vector<ir::NodePtr>& nodes) {
  Context& ctx = lowering_context();
  const int per_dispatch = tensors_per_dispatch(ctx);
  TESSERA_CHECK(per_dispatch > 0, "vulkan: adam_update was claimed on a device without room for its buffers");
  const ir::Node& first = *nodes.front();
  const AdamHyper h = hyper_of(first);
  const int32_t lr = L.packed(L.value(first.input(4))), step = L.packed(L.value(first.input(5)));
  std::vector<int32_t> reads = {lr, step}, writes;
  std::vector<ShaderDispatch> dispatches;
  int64_t total = 0;
  for (size_t from = 0; from < nodes.size(); from += static_cast<size_t>(per_dispatch)) {
    const std::vector<ir::NodePtr> chunk(nodes.begin() + static_cast<std::ptrdiff_t>(from),
                                         nodes.begin() + static_cast<std::ptrdiff_t>(std::min(nodes.size(), from + static_cast<size_t>(per_dispatch))));
    ShaderDispatch d;
    d.bindings = {{L.operand(lr), 8, false, 4}, {L.operand(step), 8, false, 4}};
    int64_t elements = 0;
    for (const ir::NodePtr& node : chunk) {
      const auto es = static_cast<uint32_t>(dtype_size(node->input(0).dtype()));
      const uint64_t bytes = static_cast<uint64_t>(node->input(0).type().numel()) * es;
      for (size_t i = 0; i < 4; ++i) {
        const int32_t in = L.packed(L.value(node->input(i)));
        reads.push_back(in);
        d.bindings.push_back({L.operand(in), bytes, false, es});
      }
      for (int i = 0; i < 3; ++i) {
        const int32_t out = L.produce(ir::Value(node, i));
        writes.push_back(out);
        d.bindings.push_back({L.operand(out), bytes, true, es});
      }
      elements += node->input(0).type().numel();
    }
    d.pipeline = ctx.pipelines().pipeline(adam_glsl(chunk, h), static_cast<int>(d.bindings.size()) + 1,
                                          fmt::format("adam x{} ({} elements)", chunk.size(), elements));
    d.shift_word = 0;
    d.shifts_per_word = 4;
    d.groups = {library_groups(elements), 1, 1};
    d.reports_status = true;
    dispatches.push_back(std::move(d));
    total += elements;
  }
  L.emit(std::make_unique<ShaderStep>(std::move(dispatches), fmt::format("{} x{} tensors, {} elements",
                                                                         h.decoupled ? "adamw" : "adam", nodes.size(),
                                                                         total)),
         reads, writes);
}

}  // namespace

bool vulkan_adam_supported(const ir::Node& node, const Context& context) {
  return claim_adam(node) && tensors_per_dispatch(context) > 0;
}

void register_optim_lowerings(common::LoweringTable& table) {
  table["adam_update"] = {nullptr, claim_adam, true, cpu::adam_group_key, lower_adam_group};
}

}  // namespace tessera::backends::vulkan
