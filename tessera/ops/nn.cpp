// Neural-network functions. The registered ops live in their own files (nn_softmax.cpp,
// nn_embedding.cpp); losses, norms, dropout and attention are composites (nn_losses.cpp,
// nn_norm.cpp, nn_dropout.cpp, nn_attention.cpp).
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

void register_nn_softmax_ops(ir::OpRegistry& registry);    // nn_softmax.cpp: softmax, log_softmax
void register_nn_embedding_ops(ir::OpRegistry& registry);  // nn_embedding.cpp: embedding, embedding_grad
void register_nn_kv_attention_ops(ir::OpRegistry& registry);  // nn_kv_attention.cpp: kv_cache_attention

void register_nn_ops(ir::OpRegistry& registry) {
  register_nn_softmax_ops(registry);
  register_nn_embedding_ops(registry);
  register_nn_kv_attention_ops(registry);
}

}  // namespace tessera::ops
