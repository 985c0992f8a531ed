#pragma once
// The CPU backend's library lowerings (library_ops_*.cpp): matmul and convolution with fused
// epilogues, pooling, softmax, reductions, indexing, quantized matmul, views, and grouped Adam
// updates, each emitting CPU steps through the shared builder (backends/common/lowering.h).
#include "tessera/backends/common/lowering.h"
#include "tessera/runtime/thread_pool.h"  // CPU steps run on the host pool

namespace tessera::backends::cpu {

// The common names every library lowering uses.
using common::BufferKind;
using common::Epilogue;
using common::Layout;
using common::Lowering;
using common::LoweringTable;
using common::Operand;
using common::RunContext;
using common::Step;
using common::StepKind;
using common::ValueInfo;

// The library lowerings, by op name (assembled from the register_* functions below).
const LoweringTable& library_lowerings();
void register_view_lowerings(LoweringTable& table);     // library_ops_views.cpp
void register_matmul_lowerings(LoweringTable& table);   // library_ops_matmul.cpp
void register_conv_lowerings(LoweringTable& table);     // library_ops_conv.cpp
void register_pool_lowerings(LoweringTable& table);     // library_ops_pool.cpp
void register_softmax_lowerings(LoweringTable& table);  // library_ops_softmax.cpp
void register_reduce_lowerings(LoweringTable& table);   // library_ops_reduce.cpp
void register_index_lowerings(LoweringTable& table);    // library_ops_index.cpp
void register_quant_lowerings(LoweringTable& table);    // library_ops_quant.cpp
void register_attention_lowerings(LoweringTable& table);  // library_ops_attention.cpp: kv_cache_attention
// adam_update nodes run as groups: every f32 update of a graph that shares hyperparameters and the
// lr/step scalars becomes one fused pass over all parameters (library_ops_optim.cpp).
void register_optim_lowerings(LoweringTable& table);
// The key under which adam_update nodes share one step: equal hyperparameters and the same lr and step
// scalars. Backend-neutral: the Vulkan backend groups its updates by it too.
std::string adam_group_key(const ir::Node& node);

// One update's operands in a group, and the group's lr and step scalars with everything it reads and
// writes: each output may be written over its own input (the kernels read an element before writing it).
struct AdamTensorOperands {
  int64_t n = 0;
  Operand p, g, m, v, p_out, m_out, v_out;
};
struct AdamGroupOperands {
  int32_t lr = -1, step = -1;
  std::vector<int32_t> reads, writes;
  std::vector<AdamTensorOperands> tensors;
};
// Binds a group's operands (packed inputs, produced outputs, in-place permissions). Backend-neutral:
// the CPU and CUDA lowerings of the group share it.
AdamGroupOperands bind_adam_group(Lowering& L, const std::vector<ir::NodePtr>& nodes);

}  // namespace tessera::backends::cpu
