#pragma once
// The CUDA backend's side of the shared lowering (backends/common/lower_graph.h): steps that launch on
// the run's stream (RunContext::stream), the step factory for copies, and the kernel compiler that
// turns a graph's clusters into one NVRTC module.
#include <memory>
#include <vector>

#include "tessera/backends/common/lower_graph.h"
#include "tessera/backends/common/lowering.h"
#include "tessera/backends/cuda/context.h"
#include "tessera/backends/cuda/grid.h"
#include "tessera/backends/cuda/loop_kernels.h"

namespace tessera::backends::cuda {

inline cudaStream_t stream_of(const common::RunContext& ctx) { return static_cast<cudaStream_t>(ctx.stream); }
inline void* index_error_flag(const common::RunContext& ctx) { return ctx.status; }
// Bits of that status word besides the index kernels' 1: an Adam step that is not a whole number >= 1.
inline constexpr int32_t kStatusAdamStep = 2;
void register_optim_lowerings(common::LoweringTable& table);

class CudaStepFactory final : public common::StepFactory {
 public:
  explicit CudaStepFactory(Context& context) : context_(context) {}
  std::unique_ptr<common::Step> copy(const common::CopyPlan& plan, common::Operand src, common::Operand dst,
                                     std::string what) const override;
  // Never reached through the splitter, which gives the CPU every node the CUDA backend lacks.
  std::unique_ptr<common::Step> fallback(const ir::Node& node, std::vector<common::Operand> inputs,
                                         std::vector<ir::TensorType> input_types,
                                         std::vector<common::Operand> outputs) const override;

 private:
  Context& context_;
};

class CudaKernelCompiler final : public common::KernelCompiler {
 public:
  explicit CudaKernelCompiler(Context& context) : context_(context) {}
  std::unique_ptr<common::CompiledClusters> compile(const std::vector<lower::Cluster>& clusters) const override;

 private:
  Context& context_;
};

// The library lowerings of the CUDA backend (views and matrix products), by op name.
const common::LoweringTable& cuda_lowerings();
// Whether the matmul lowering takes this node (dtypes, ranks).
bool cuda_matmul_supported(const ir::Node& node);
// Whether gather / scatter_add run on the GPU (index and value dtypes); library_ops_index.cpp.
bool cuda_index_op_supported(const ir::Node& node);
void register_index_lowerings(common::LoweringTable& table);
// Whether index_copy's kernel converts rows of `from` into a cache of `to` as it writes them (f32, f16,
// bf16): what convert_on_write may fold a cast into.
bool index_copy_converts(DType from, DType to);
// quantized_matmul and dequantize over GGUF blocks (library_ops_quant.cpp).
void register_quant_lowerings(common::LoweringTable& table);
// conv, conv_input_grad and conv_weight_grad as implicit GEMMs (library_ops_conv.cpp).
void register_conv_lowerings(common::LoweringTable& table);
// max_pool and max_pool_grad over two spatial axes (library_ops_pool.cpp).
void register_pool_lowerings(common::LoweringTable& table);
// kv_cache_attention (library_ops_attention.cpp).
void register_attention_lowerings(common::LoweringTable& table);
// Whether the kv_cache_attention lowering writes a decode step's new cache rows itself (those
// common/cache_appends.h finds, into the f32 or f16 caches it claims).
bool folds_cache_writes(const ir::Node& attention);
// The context the lowering in progress compiles for (library lowerings have no other way to reach it).
Context& lowering_context();
void set_lowering_context(Context* context);

}  // namespace tessera::backends::cuda

namespace tessera::backends::cuda {
// f32 products through TF32 tensor cores: $TESSERA_TF32=1, or set_tf32(true). Off by default (exact
// f32, as PyTorch's default for matmul). Read when a graph is compiled.
bool tf32_enabled();
void set_tf32(bool enabled);
}  // namespace tessera::backends::cuda
