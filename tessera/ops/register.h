#pragma once
// Each op family registers its OpDefs with one function; register_all_ops calls them all. Adding a
// family means adding its function here and in register_all.cpp.
namespace tessera::ir {
class OpRegistry;
}

namespace tessera::ops {

// Called once, by ir::OpRegistry::instance() through tessera_register_all_ops (register_all.cpp).
void register_all_ops(ir::OpRegistry& registry);

void register_leaf_ops(ir::OpRegistry& registry);      // input, constant
void register_creation_ops(ir::OpRegistry& registry);  // full, arange, eye
void register_unary_ops(ir::OpRegistry& registry);     // exp, relu, cast, stop_gradient, ...
void register_binary_ops(ir::OpRegistry& registry);    // add, pow, comparisons, where, clamp, ...
void register_reduce_ops(ir::OpRegistry& registry);    // sum, max, argmax, logsumexp, cumsum, ...
void register_shape_ops(ir::OpRegistry& registry);     // reshape, permute, slice, concat, pad, ...
void register_more_shape_ops(ir::OpRegistry& registry);  // shape_more.cpp: slice, concat, pad, ...
void register_index_ops(ir::OpRegistry& registry);     // gather, index_select, scatter_add, one_hot
void register_linalg_ops(ir::OpRegistry& registry);    // matmul
void register_nn_ops(ir::OpRegistry& registry);        // softmax, norms, losses, attention
void register_conv_ops(ir::OpRegistry& registry);      // conv, conv_transpose, pooling, upsample
void register_random_ops(ir::OpRegistry& registry);    // uniform, normal, bernoulli, randint, permutation
void register_optim_ops(ir::OpRegistry& registry);     // adam_update

}  // namespace tessera::ops
