#include "tessera/ops/register.h"

namespace tessera::ops {

void register_all_ops(ir::OpRegistry& registry) {
  register_leaf_ops(registry);
  register_creation_ops(registry);
  register_unary_ops(registry);
  register_binary_ops(registry);
  register_reduce_ops(registry);
  register_shape_ops(registry);
  register_index_ops(registry);
  register_linalg_ops(registry);
  register_nn_ops(registry);
  register_conv_ops(registry);
  register_random_ops(registry);
  register_optim_ops(registry);
  void register_quant_ops(ir::OpRegistry&); register_quant_ops(registry);  // quant_ops.cpp (declaration: register.h)
}

}  // namespace tessera::ops

// What ir::OpRegistry::instance() calls (weakly referenced from the IR layer, which lies below this one).
extern "C" void tessera_register_all_ops(tessera::ir::OpRegistry& registry) {
  tessera::ops::register_all_ops(registry);
}
