#include "tessera/autodiff/decomposed_vjp.h"

#include "tessera/autodiff/grad.h"
#include "tessera/core/error.h"
#include "tessera/ops/ops.h"

namespace tessera::autodiff {

std::vector<ir::Value> vjp_through_decomposition(const ir::VjpContext& c) {
  const ir::OpDef& op = c.node.op();
  TESSERA_CHECK(static_cast<bool>(op.decompose), "{}: the gradient goes through a decomposition the op does not declare",
                op.name);
  const std::vector<ir::Value> outs = op.decompose(c.inputs, c.attrs());
  std::vector<ir::Value> cotangents;
  for (size_t i = 0; i < outs.size(); ++i) {
    const bool given = i < c.cotangents.size() && c.cotangents[i].defined();
    cotangents.push_back(given ? c.cotangents[i] : ops::zeros_like(Tensor(outs[i])).value());
  }
  std::vector<ir::Value> wrt;
  std::vector<size_t> where;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!is_floating(c.inputs[i].dtype())) continue;
    where.push_back(i);
    wrt.push_back(c.inputs[i]);
  }
  std::vector<ir::Value> result(c.inputs.size());
  const std::vector<ir::Value> grads = vjp(outs, cotangents, wrt);
  for (size_t j = 0; j < where.size(); ++j) result[where[j]] = grads[j];
  return result;
}

}  // namespace tessera::autodiff
