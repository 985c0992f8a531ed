#pragma once
// The Vulkan backend's library lowerings, one file per family, each registering its ops into the
// backend's table (vulkan_lowerings() in library_ops_matmul.cpp). Their claims look at the node alone
// (dtypes, ranks, sizes); supports() has already checked that the device stores the node's dtypes.
#include "tessera/backends/common/lowering.h"

namespace tessera::backends::vulkan {

class Context;
struct ShaderDispatch;

void register_softmax_lowerings(common::LoweringTable& table);  // library_ops_softmax.cpp
void register_index_lowerings(common::LoweringTable& table);    // library_ops_index.cpp
void register_scatter_lowerings(common::LoweringTable& table);  // library_ops_scatter.cpp
void register_arg_lowerings(common::LoweringTable& table);      // library_ops_arg.cpp
void register_cumsum_lowerings(common::LoweringTable& table);   // library_ops_cumsum.cpp
void register_pad_lowerings(common::LoweringTable& table);      // library_ops_pad.cpp
void register_optim_lowerings(common::LoweringTable& table);    // library_ops_optim.cpp
void register_index_copy_lowerings(common::LoweringTable& table);  // library_ops_index_copy.cpp
// Whether index_copy converts rows of `from` into a cache of `to` as it writes them (f32 into f16 or
// bf16): what common::convert_on_write may fold a cast into.
bool vulkan_index_copy_converts(DType from, DType to);
// A dispatch that copies `numel` elements of value `from` into value `to`, skipped in a run where the
// two are the same memory (a cache updated in place); index_copy's first dispatch.
ShaderDispatch cache_copy_dispatch(common::Lowering& L, int32_t from, int32_t to, DType dtype, int64_t numel);
void register_creation_lowerings(common::LoweringTable& table);  // library_ops_creation.cpp
void register_quant_lowerings(common::LoweringTable& table);    // library_ops_quant.cpp
void register_attention_lowerings(common::LoweringTable& table);  // library_ops_attention.cpp
void register_conv_lowerings(common::LoweringTable& table);     // library_ops_conv.cpp
void register_pool_lowerings(common::LoweringTable& table);     // library_ops_pool.cpp
// Whether the kv_cache_attention lowering writes a decode step's new cache rows itself (those
// common/cache_appends.h finds, into the f32 or f16 caches it claims).
bool vulkan_folds_cache_writes(const ir::Node& attention);

/// Whether adam_update runs here: f32 or f16 state with f64 lr and step scalars (read as raw words,
/// so supports() asks this instead of checking that the device computes in f64), on a device with
/// binding slots for at least one tensor's seven buffers.
bool vulkan_adam_supported(const ir::Node& node, const Context& context);

}  // namespace tessera::backends::vulkan
