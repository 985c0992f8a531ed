#include "tessera/autodiff/grad.h"

#include <unordered_map>
#include <unordered_set>

#include "tessera/api/tensor.h"
#include "tessera/ir/op_def.h"
#include "tessera/ir/origin.h"
#include "tessera/ops/ops.h"

namespace tessera::autodiff {

namespace {

// Nodes reachable backwards from `outputs`, in topological order (inputs before users).
std::vector<ir::NodePtr> topo_order(const std::vector<ir::Value>& outputs) {
  std::vector<ir::NodePtr> order;
  std::unordered_set<const ir::Node*> visited;
  struct Frame {
    ir::NodePtr node;
    size_t next;
  };
  for (const ir::Value& out : outputs) {
    if (!visited.insert(out.node().get()).second) continue;
    std::vector<Frame> stack{{out.node(), 0}};
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.node->inputs().size()) {
        const ir::NodePtr& in = f.node->inputs()[f.next++].node();
        if (visited.insert(in.get()).second) stack.push_back({in, 0});
        continue;
      }
      order.push_back(f.node);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace

std::vector<ir::Value> vjp(const std::vector<ir::Value>& outputs, const std::vector<ir::Value>& cotangents,
                           const std::vector<ir::Value>& wrt) {
  TESSERA_CHECK(outputs.size() == cotangents.size(), "vjp: {} outputs but {} cotangents", outputs.size(),
                cotangents.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    TESSERA_CHECK(outputs[i].type() == cotangents[i].type(), "vjp: cotangent {} is {} but output {} is {}", i,
                  ir::type_str(cotangents[i].type()), i, ir::type_str(outputs[i].type()));
  }
  const std::vector<ir::NodePtr> order = topo_order(outputs);

  // Only nodes on a path from some `wrt` value to an output need their VJP.
  std::unordered_set<ir::Value, ir::ValueHash> wrt_set(wrt.begin(), wrt.end());
  std::unordered_set<const ir::Node*> depends;
  for (const ir::NodePtr& n : order) {
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (wrt_set.count(ir::Value(n, i))) depends.insert(n.get());
    }
    for (const ir::Value& in : n->inputs()) {
      if (depends.count(in.node().get())) depends.insert(n.get());
    }
  }

  std::unordered_map<ir::Value, Tensor, ir::ValueHash> ct;
  auto accumulate = [&](const ir::Value& v, const Tensor& g) {
    auto it = ct.find(v);
    if (it == ct.end()) {
      ct.emplace(v, g);
    } else {
      it->second = ops::add(it->second, g);
    }
  };
  for (size_t i = 0; i < outputs.size(); ++i) accumulate(outputs[i], cotangents[i]);

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::NodePtr& node = *it;
    if (!depends.count(node.get()) || node->inputs().empty()) continue;
    ir::VjpContext ctx{*node, node->inputs(), {}, {}};
    bool any = false;
    for (int i = 0; i < node->num_outputs(); ++i) {
      ir::Value out(node, i);
      ctx.outputs.push_back(out);
      auto c = ct.find(out);
      ctx.cotangents.push_back(c == ct.end() ? ir::Value() : c->second.value());
      any = any || c != ct.end();
    }
    if (!any) continue;
    // Gradients flow only through floating values; integer and bool outputs (indices, masks) end paths.
    bool floating_out = false;
    for (const ir::TensorType& t : node->output_types()) floating_out = floating_out || is_floating(t.dtype);
    if (!floating_out) continue;
    bool needs_grad = false;
    for (const ir::Value& in : node->inputs()) needs_grad = needs_grad || depends.count(in.node().get());
    if (!needs_grad) continue;
    if (!node->op().vjp) {
      fail("autodiff: op '{}' has no gradient rule, but a gradient must flow through it (node %{} with "
           "output {})",
           node->op_name(), node->id(), ir::type_str(node->output_types()[0]));
    }
    // Gradient nodes name the node they differentiate, so a later error can point back to the user's code.
    const ir::OriginScope origin(
        node->origin_ptr() ? node->origin_ptr() : std::make_shared<const std::string>(node->op_name()), "gradient of");
    std::vector<ir::Value> in_ct = node->op().vjp(ctx);
    TESSERA_CHECK(in_ct.size() == node->inputs().size(),
                  "internal error: gradient rule of '{}' returned {} cotangents for {} inputs", node->op_name(),
                  in_ct.size(), node->inputs().size());
    for (size_t i = 0; i < in_ct.size(); ++i) {
      if (!in_ct[i].defined() || !depends.count(node->inputs()[i].node().get())) continue;
      if (!is_floating(node->inputs()[i].dtype())) continue;
      const ir::TensorType& want = node->inputs()[i].type();
      TESSERA_CHECK(in_ct[i].type() == want,
                    "internal error: gradient rule of '{}' gave {} for input {} of type {}", node->op_name(),
                    ir::type_str(in_ct[i].type()), i, ir::type_str(want));
      accumulate(node->inputs()[i], in_ct[i]);
    }
  }

  std::vector<ir::Value> result;
  for (const ir::Value& w : wrt) {
    auto c = ct.find(w);
    result.push_back(c == ct.end() ? ops::zeros_like(Tensor(w)).value() : c->second.value());
  }
  return result;
}

ir::Graph grad_graph(const ir::Graph& graph, size_t output, const std::vector<size_t>& wrt_inputs) {
  TESSERA_CHECK(output < graph.outputs().size(), "grad_graph: output {} out of range (graph has {})", output,
                graph.outputs().size());
  const ir::Value& loss = graph.outputs()[output];
  TESSERA_CHECK(loss.type().numel() == 1 && is_floating(loss.dtype()),
                "grad_graph: the differentiated output must be a one-element floating tensor, got {}",
                ir::type_str(loss.type()));
  std::vector<ir::Value> wrt;
  for (size_t i : wrt_inputs) {
    TESSERA_CHECK(i < graph.inputs().size(), "grad_graph: input {} out of range (graph has {})", i,
                  graph.inputs().size());
    wrt.push_back(graph.inputs()[i]);
  }
  std::vector<ir::Value> grads = vjp({loss}, {ops::ones_like(Tensor(loss)).value()}, wrt);
  std::vector<ir::Value> outs = graph.outputs();
  outs.insert(outs.end(), grads.begin(), grads.end());
  return ir::Graph::build(graph.inputs(), outs, graph.name() + "_grad");
}

}  // namespace tessera::autodiff
