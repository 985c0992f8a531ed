#include "tessera/backends/vulkan/vulkan_backend.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "tessera/backends/common/compile_profile.h"
#include "tessera/backends/common/convert_on_write.h"
#include "tessera/backends/common/lower_graph.h"
#include "tessera/backends/common/program.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/backends/split.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/executable.h"
#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/loop_kernels.h"
#include "tessera/backends/vulkan/pipelines.h"
#include "tessera/backends/vulkan/steps.h"
#include "tessera/backends/vulkan/vulkan_device.h"
#include "tessera/core/error.h"
#include "tessera/lower/fusion.h"
#include "tessera/passes/decompose.h"
#include "tessera/backends/common/device_graph.h"

namespace tessera::backends::vulkan {

namespace {

struct Probe {
  Context* context = nullptr;
  std::string status;
};

const Probe& cached_probe() {
  static const Probe p = [] {
    Probe probe;
    std::string why;
    probe.context = Context::create(why);
    probe.status = probe.context != nullptr ? "available: " + probe.context->description() : "not available: " + why;
    return probe;
  }();
  return p;
}

// Whether the device's shaders can hold values of this type. f64 stays on the CPU: GLSL has no f64
// transcendentals (the dialect evaluates them in f32) and many devices lack shaderFloat64.
bool dtype_ok(DType dt, const Features& f) {
  switch (dt) {
    case DType::f32:
    case DType::i32:
      return true;
    case DType::i64:
      return f.int64;
    case DType::i8:
    case DType::u8:
    case DType::boolean:
      return f.storage8;
    case DType::f16:
    case DType::bf16:
      return f.storage16;
    default:
      return false;
  }
}

// Graph inputs and constants only need to be held: f64 ones too (8-byte elements move as two words),
// for the ops that read them as raw words (adam_update's lr and step); an op that would compute in
// f64 is still refused, which sends it to the CPU with its f64 operands.
bool storable(DType dt, const Features& f) { return dtype_ok(dt, f) || dt == DType::f64; }

bool types_ok(const ir::Node& node, const Features& f) {
  for (const ir::Value& v : node.inputs()) {
    if (!dtype_ok(v.dtype(), f)) return false;
  }
  for (const ir::TensorType& t : node.output_types()) {
    if (!dtype_ok(t.dtype, f)) return false;
  }
  return true;
}

// What the GLSL dialect cannot express yet, found by the differential suite on lavapipe: arithmetic,
// ordering and min/max on bools (GLSL has no + or < on bool), and integer pow (GLSL's pow is float-only).
bool glsl_expresses(const ir::Node& node) {
  const std::string& op = node.op_name();
  bool bool_input = false;
  for (const ir::Value& v : node.inputs()) bool_input = bool_input || v.dtype() == DType::boolean;
  if (bool_input) {
    static const std::set<std::string> bool_ops = {"logical_and", "logical_or", "logical_not", "where", "cast",
                                                   "eq", "ne", "any", "all"};
    if (bool_ops.count(op) == 0) return false;
  }
  if (op == "pow" && !node.inputs().empty() && !is_floating(node.input(0).dtype())) return false;
  // arange's generated form computes in 64-bit integers or doubles, which shaders may lack: only the
  // library shader (exact steps) runs it here.
  if (op == "arange") return false;
  return true;
}

class VulkanBackend final : public Backend {
 public:
  std::string name() const override { return "vulkan"; }
  bool available() const override { return cached_probe().context != nullptr; }
  std::string status() const override { return cached_probe().status; }
  std::vector<Device*> devices() override {
    if (!available()) return {};
    return {&context().memory()};
  }
  Device& device() override { return context().memory(); }

  bool supports(const ir::Node& node) const override {
    if (!available()) return false;
    const Context& ctx = *cached_probe().context;
    const Features& f = ctx.features();
    if (node.op_name() == "constant" || node.op_name() == "input") return storable(node.output_types()[0].dtype, f);
    if (node.op_name() == "adam_update") return dtype_ok(node.input(0).dtype(), f) && vulkan_adam_supported(node, ctx);
    if (!types_ok(node, f)) return false;
    if (node.op_name() == "matmul") return vulkan_matmul_supported(node, f);
    const common::LoweringTable& table = vulkan_lowerings();
    if (auto it = table.find(node.op_name()); it != table.end()) {
      // The view lowerings' claims need no context (matmul, whose claim does, was answered above).
      if (it->second.claims == nullptr || it->second.claims(node)) return true;
    }
    return lower::can_generate(node, /*half_types=*/f.storage16) && glsl_expresses(node);
  }

  using Backend::compile;
  std::unique_ptr<Executable> compile(const ir::Graph& graph, const CompileSpec& spec) override {
    if (!available()) throw Error(fmt::format("vulkan backend: {}", status()));
    check_aliases(graph, spec.aliases);
    for (const ir::NodePtr& n : graph.nodes()) {
      if (!supports(*n)) return compile_split(graph, *this, cpu_backend(), spec);
    }
    const common::CompileProfile profile("vulkan compile");
    Context& ctx = context();
    common::DeviceGraph d = common::prepare_device_graph(*this, graph);
    // A KV cache's cast rows are converted by the cache write itself (no cast dispatch per layer).
    d.optimized = common::convert_on_write(d.optimized, vulkan_index_copy_converts);
    common::BackendLowering lowering;
    lowering.name = "vulkan";
    lowering.table = &vulkan_lowerings();
    VulkanStepFactory steps(ctx);
    VulkanKernelCompiler kernels(ctx);
    lowering.steps = &steps;
    lowering.kernels = &kernels;
    common::LowerOptions options;
    // Products apply their tails as they store (f32 and quantized: + bias, ReLU or tanh-GELU, + a
    // residual; an MLP layer is one dispatch, and a decode step's residual adds are none). A product
    // whose only use is its transpose (a weight gradient) is computed transposed, its operands read
    // transposed where they lie; quantized re-layouts are left to the generated kernels or the CPU. (In-place
    // results were off here while the training steps drifted by ~1e-3; that was the CPU plan cache
    // handing a split segment the scalars of another graph, fixed in the cache.)
    options.half_types = ctx.features().storage16;
    options.max_kernel_buffers = kMaxShaderBuffers;  // the bindings a shader's push constants describe
    options.fusion = common::following_row_kernel_switch(
        common::FusionSet::all().without(common::Fusion::relayout));
    // f32 products: + bias, ReLU or tanh-GELU, + a residual (matmul_shader.h).
    options.epilogue_limits.activations = common::kGpuTailActivations;
    options.epilogue_limits.activation_after_residual = false;
    options.epilogue_limits.convolutions = true;  // the forward convolution's tail (conv_shader.h)
    options.epilogue_limits.quantized_products = true;
    // GPT-2's gelu(x W + b) in the matvec's store (one dispatch a layer fewer).
    options.epilogue_limits.quantized_activations = common::kGpuTailActivations;
    // A decode step's K/V cache writes done by the attention that reads them (two steps a layer fewer).
    options.folds_cache_writes = vulkan_folds_cache_writes;
    set_lowering_context(&ctx);
    std::shared_ptr<const common::Program> program;
    try {
      program = common::lower_graph(d.optimized, lowering, options, d.original);
    } catch (...) {
      set_lowering_context(nullptr);
      throw;
    }
    set_lowering_context(nullptr);
    ctx.pipelines().save_cache();
    std::vector<Array> bound = common::bind_constants(*program, d.constants);
    return std::make_unique<VulkanExecutable>(ctx, graph, std::move(program), std::move(bound), spec.aliases);
  }

 private:
  Context& context() const {
    if (!available()) throw Error(fmt::format("vulkan backend: {}", status()));
    return *cached_probe().context;
  }
};

}  // namespace

Backend& vulkan_backend() {
  static VulkanBackend* backend = new VulkanBackend();
  return *backend;
}

Context* vulkan_context() { return cached_probe().context; }

bool runs_on_vulkan(const ir::Node& node) {
  Backend& b = vulkan_backend();
  if (b.supports(node)) return true;
  if (!node.op().decompose || node.is_leaf()) return false;
  // What the splitter would do with the node alone: decompose it where this backend lacks it.
  std::vector<ir::Value> inputs;
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    inputs.push_back(ir::make_input(fmt::format("in{}", i), node.input(i).type()));
  }
  const std::vector<ir::Value> outputs = ir::make_node_typed(node.op(), inputs, node.attrs(), node.output_types());
  const ir::Graph alone = passes::decompose_where(ir::Graph::build(inputs, outputs, node.op_name()),
                                                  [&b](const ir::Node& n) { return !b.supports(n); });
  for (const ir::NodePtr& n : alone.nodes()) {
    if (!b.supports(*n)) return false;
  }
  return true;
}

std::vector<std::string> vulkan_fallback_ops(const ir::Graph& graph) {
  std::set<std::string> names;
  for (const ir::NodePtr& n : graph.nodes()) {
    if (!runs_on_vulkan(*n)) names.insert(n->op_name());
  }
  return {names.begin(), names.end()};
}

}  // namespace tessera::backends::vulkan
