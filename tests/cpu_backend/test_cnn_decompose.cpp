// The CNN training step (model_steps.cpp: conv 1->32, relu, max_pool, conv 32->64, relu, max_pool,
// linear, relu, linear, cross entropy, Adam) with its convolutions and pools decomposed: no conv/pool
// node is left, the loss and the updated parameters and moments (which carry the gradients) match the
// undecomposed step on the reference backend, and decomposed as the CUDA backend would (everything
// it does not keep) the batch-256 step is made only of ops it keeps.
#include "model_steps.h"
#include "ops_conv/decompose_check.h"

namespace tessera::test {
namespace {

std::set<std::string> op_names(const ir::Graph& g) {
  std::set<std::string> names;
  for (const ir::NodePtr& n : g.nodes()) names.insert(n->op_name());
  return names;
}

TEST(CnnDecompose, StepMatchesTheUndecomposedStep) {
  for (bool fused : {true, false}) {
    SCOPED_TRACE(fused ? "fused adam" : "elementwise adam");
    const StepGraph s = cnn_train_step(8, fused);
    const std::set<std::string> before = op_names(s.graph);
    for (const char* op : {"conv", "conv_input_grad", "conv_weight_grad", "max_pool", "max_pool_grad"}) {
      EXPECT_TRUE(before.count(op)) << op;  // the step really has them (conv_input_grad: the second conv)
    }
    expect_decomposition_matches(s.graph, s.inputs, 1e-5);
  }
}

TEST(CnnDecompose, FullSizeStepIsKeptByTheCudaBackend) {
  const StepGraph s = cnn_train_step(256, true);
  const ir::Graph d = passes::decompose_where(s.graph, [](const ir::Node& n) { return !cuda_keeps(n); });
  for (const std::string& op : op_names(d)) EXPECT_FALSE(conv_pool_ops().count(op)) << op;
  expect_cuda_keeps_all(d);
}

}  // namespace
}  // namespace tessera::test
