#include "tessera/backends/cuda/cuda_backend.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "tessera/backends/common/compile_profile.h"
#include "tessera/backends/common/convert_on_write.h"
#include "tessera/backends/common/lower_graph.h"
#include "tessera/backends/common/program.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/backends/cuda/context.h"
#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/backends/cuda/lazy_library.h"
#include "tessera/backends/cuda/narrow_activations.h"
#include "tessera/backends/cuda/steps.h"
#include "tessera/backends/split.h"
#include "tessera/core/error.h"
#include "tessera/lower/fusion.h"
#include "tessera/backends/common/device_graph.h"

namespace tessera::backends::cuda {

namespace {

struct Probe {
  bool available = false;
  std::string status;
  int devices = 0;
};

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

// Asks the runtime once whether a driver and a GPU are there, then opens cuBLASLt and NVRTC; nothing
// else touches CUDA before.
Probe probe() {
  Probe p;
  int driver = 0, runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
    cudaGetLastError();
    p.status = "not available: no CUDA driver found (libcuda.so.1 is not installed or not loadable)";
    return p;
  }
  if (driver < runtime) {
    p.status = fmt::format("not available: the CUDA driver supports CUDA {} but Tessera was built with CUDA {}; "
                           "update the driver",
                           version_text(driver), version_text(runtime));
    return p;
  }
  const cudaError_t status = cudaGetDeviceCount(&p.devices);
  if (status != cudaSuccess || p.devices == 0) {
    cudaGetLastError();
    p.status = status == cudaSuccess ? "not available: the driver reports no CUDA device"
                                     : fmt::format("not available: {} ({})", cudaGetErrorString(status),
                                                   cudaGetErrorName(status));
    p.devices = 0;
    return p;
  }
  // Opened here, when the backend is first asked for (never by CPU-only runs): a missing library makes
  // the backend unavailable with the loader's reason, not a failure in the middle of a compile.
  for (const LazyLibrary* library : {&cublaslt_library(), &nvrtc_library()}) {
    if (!library->loaded()) {
      p.status = "not available: " + library->error();
      p.devices = 0;
      return p;
    }
  }
  p.available = true;
  p.status = fmt::format("available: {} device{}, driver CUDA {}, runtime CUDA {}", p.devices,
                         p.devices == 1 ? "" : "s", version_text(driver), version_text(runtime));
  return p;
}

const Probe& cached_probe() {
  static const Probe p = probe();
  return p;
}

class CudaBackend final : public Backend {
 public:
  std::string name() const override { return "cuda"; }
  bool available() const override { return cached_probe().available; }
  std::string status() const override { return cached_probe().status; }

  std::vector<Device*> devices() override {
    std::vector<Device*> out;
    for (int i = 0; i < cached_probe().devices; ++i) out.push_back(&context(i).device());
    return out;
  }
  Device& device() override { return context(0).device(); }

  bool supports(const ir::Node& node) const override {
    if (node.op_name() == "matmul") return cuda_matmul_supported(node);
    if (node.op_name() == "gather" || node.op_name() == "scatter_add") return cuda_index_op_supported(node);
    if (node.op_name() == "constant" || node.op_name() == "input") return true;
    const common::LoweringTable& table = cuda_lowerings();
    if (auto it = table.find(node.op_name()); it != table.end() && it->second.claims(node)) return true;
    return lower::can_generate(node, /*half_types=*/true);  // NVRTC kernels compute f16/bf16 in f32
  }

  using Backend::compile;
  std::unique_ptr<Executable> compile(const ir::Graph& graph, const CompileSpec& spec) override {
    if (!available()) throw Error(fmt::format("cuda backend: {}", status()));
    check_aliases(graph, spec.aliases);
    for (const ir::NodePtr& n : graph.nodes()) {
      if (!supports(*n)) return compile_split(graph, *this, cpu_backend(), spec);
    }
    const common::CompileProfile profile("cuda compile");
    Context& ctx = context(0);
    ctx.device().make_current();
    std::optional<common::CompilePhase> phase(std::in_place, "prepare");
    common::DeviceGraph d = common::prepare_device_graph(*this, graph);
    d.optimized = common::convert_on_write(narrow_product_activations(d.optimized), index_copy_converts);
    phase.emplace("lower");
    common::BackendLowering lowering;
    lowering.name = "cuda";
    lowering.table = &cuda_lowerings();
    CudaStepFactory steps(ctx);
    CudaKernelCompiler kernels(ctx);
    lowering.steps = &steps;
    lowering.kernels = &kernels;
    common::LowerOptions options;
    // Matrix-product tails go to cuBLASLt's epilogues (bias, ReLU / tanh-GELU, residual before any
    // activation); a product whose only use is its transpose is computed transposed (operands swapped).
    options.epilogue_limits.activations = common::kGpuTailActivations;
    options.epilogue_limits.residual_after_activation = false;
    options.epilogue_limits.activation_after_residual = false;
    options.epilogue_limits.convolutions = true;  // the implicit GEMM's tail (library_ops_conv.cpp)
    options.epilogue_limits.quantized_products = true;
    // GPT-2's gelu(x W + b): the matvec (and cuBLASLt for prefill) applies it as it stores. Not yet run
    // on a GPU outside the tests: TESSERA_CUDA_PRODUCT_ACTIVATIONS=1 turns it on.
    if (env_is("TESSERA_CUDA_PRODUCT_ACTIVATIONS", "1")) {
      options.epilogue_limits.quantized_activations = common::kGpuTailActivations;
    }
    options.half_types = true;
    // A decode step's K/V cache writes done by the attention that reads them (two launches a layer
    // fewer). Not yet measured on a GPU: TESSERA_CUDA_FOLD_CACHE_WRITES=1 turns it on.
    if (env_is("TESSERA_CUDA_FOLD_CACHE_WRITES", "1")) options.folds_cache_writes = folds_cache_writes;
    // Row kernels (a reduction and its use over the row in one kernel) only over rows of at most 256
    // elements: on an H200, over a decode step's rows (768-2,048 wide, one row) they made decode slower
    // (Llama-1B shape bf16 861 against 906 tok/s, GPT-2 small 1,246 against 1,453, same call), one block
    // walking the row twice where the separate kernels spread it over the GPU and overlap by programmatic
    // launch, and a 2,048-token prefill's norms 2.6% slower (201K against 206K tok/s, one call); a batch's
    // log-softmax and its gradient (64 rows of 10 classes) are each one launch instead of three (MLP
    // step at batch 64: 122 against 125 us, two rounds). TESSERA_CUDA_ROW_KERNELS=1: rows of any length
    // (up to the shared limit), =0: never, =few: also over at most 8 rows of any length (a block per row).
    const char* rows = std::getenv("TESSERA_CUDA_ROW_KERNELS");
    const std::string row_setting = rows == nullptr ? "" : rows;
    common::FusionSet fusion = common::FusionSet::all().without(common::Fusion::relayout);
    if (row_setting == "0") fusion = fusion.without(common::Fusion::row_kernels);
    if (row_setting != "1") options.max_row_kernel_elements = 256;
    if (row_setting == "few") options.few_row_kernel_rows = 8;
    options.fusion = common::following_row_kernel_switch(fusion);
    set_lowering_context(&ctx);
    std::shared_ptr<const common::Program> program;
    try {
      program = common::lower_graph(d.optimized, lowering, options, d.original);
    } catch (...) {
      set_lowering_context(nullptr);
      throw;
    }
    set_lowering_context(nullptr);
    phase.emplace("constants");
    std::vector<Array> bound = common::bind_constants(*program, d.constants);
    phase.emplace("executable");
    return std::make_unique<CudaExecutable>(ctx, graph, std::move(program), std::move(bound), spec.aliases);
  }

 private:
  // Contexts are made on first use and kept for the process (never destroyed: the CUDA runtime may
  // already be shut down when static destructors run).
  Context& context(int index) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!available()) throw Error(fmt::format("cuda backend: {}", status()));
    TESSERA_CHECK(index >= 0 && index < cached_probe().devices, "cuda backend: no device cuda:{} ({} present)", index,
                  cached_probe().devices);
    auto it = contexts_.find(index);
    if (it == contexts_.end()) it = contexts_.emplace(index, new Context(index)).first;
    return *it->second;
  }

  std::mutex mutex_;
  std::unordered_map<int, Context*> contexts_;
};

}  // namespace

Backend& cuda_backend() {
  static CudaBackend* backend = new CudaBackend();
  return *backend;
}

}  // namespace tessera::backends::cuda
