#include "tessera/api/transforms.h"

#include "tessera/autodiff/grad.h"
#include "tessera/ops/ops.h"

namespace tessera {

namespace {

std::vector<size_t> resolve_argnums(const std::vector<size_t>& argnums, size_t nargs) {
  std::vector<size_t> out = argnums;
  if (out.empty()) {
    for (size_t i = 0; i < nargs; ++i) out.push_back(i);
  }
  for (size_t i : out) TESSERA_CHECK(i < nargs, "grad: argnum {} out of range for {} arguments", i, nargs);
  return out;
}

std::vector<Tensor> value_and_grads(const ScalarFn& fn, const std::vector<size_t>& argnums,
                                    const std::vector<Tensor>& args) {
  const std::vector<size_t> which = resolve_argnums(argnums, args.size());
  Tensor out = fn(args);
  TESSERA_CHECK(out.defined() && out.numel() == 1 && is_floating(out.dtype()),
                "grad: the function must return a one-element floating tensor, got {}",
                out.defined() ? ir::type_str(out.type()) : std::string("an undefined tensor"));
  std::vector<ir::Value> wrt;
  for (size_t i : which) wrt.push_back(args[i].value());
  std::vector<ir::Value> grads = autodiff::vjp({out.value()}, {ops::ones_like(out).value()}, wrt);
  std::vector<Tensor> result{out};
  result.insert(result.end(), grads.begin(), grads.end());
  return result;
}

}  // namespace

MultiFn grad(ScalarFn fn, std::vector<size_t> argnums) {
  return [fn = std::move(fn), argnums = std::move(argnums)](const std::vector<Tensor>& args) {
    std::vector<Tensor> vg = value_and_grads(fn, argnums, args);
    return std::vector<Tensor>(vg.begin() + 1, vg.end());
  };
}

MultiFn value_and_grad(ScalarFn fn, std::vector<size_t> argnums) {
  return [fn = std::move(fn), argnums = std::move(argnums)](const std::vector<Tensor>& args) {
    return value_and_grads(fn, argnums, args);
  };
}

Tensor stop_gradient(const Tensor& x) { return ops::stop_gradient(x); }

ir::Graph trace(const MultiFn& fn, const std::vector<ir::TensorType>& input_types,
                const std::vector<std::string>& input_names) {
  std::vector<Tensor> placeholders;
  std::vector<ir::Value> inputs;
  for (size_t i = 0; i < input_types.size(); ++i) {
    const std::string name = i < input_names.size() ? input_names[i] : fmt::format("arg{}", i);
    placeholders.push_back(Tensor::placeholder(name, input_types[i].dtype, input_types[i].shape));
    inputs.push_back(placeholders.back().value());
  }
  std::vector<Tensor> outs = fn(placeholders);
  std::vector<ir::Value> outputs;
  for (const Tensor& t : outs) {
    TESSERA_CHECK(t.defined(), "trace: the function returned an undefined tensor");
    outputs.push_back(t.value());
  }
  return ir::Graph::build(inputs, outputs, "traced");
}

CompiledFunction::CompiledFunction(MultiFn fn, backends::Backend* backend)
    : fn_(std::move(fn)), backend_(backend ? backend : &backends::default_backend()) {}

namespace {

// A captured leaf whose data can change between calls: a module's parameter or buffer, a tensor that
// requires gradients, or a constant whose memory someone else still holds (an Array of the caller's,
// a detached view): its node and its runtime memo are two references, anything more is a third party.
bool reads_at_every_call(const ir::Node& n) {
  if (n.op_name() != "constant" || !n.has_data()) return false;
  const ir::Node::Runtime& rt = n.runtime();
  return rt.variable || rt.requires_grad || rt.outputs[0].storage().use_count() > 2;
}

}  // namespace

CompiledFunction::Entry& CompiledFunction::entry_for(const std::vector<ir::TensorType>& types) {
  Signature sig;
  for (const auto& t : types) sig.emplace_back(t.dtype, t.shape);
  auto it = cache_.find(sig);
  if (it == cache_.end()) {
    ++traces_;
    const ir::Graph traced = trace(fn_, types);
    Entry e;
    std::vector<ir::Value> inputs = traced.inputs();
    for (const ir::NodePtr& n : traced.nodes()) {
      if (!reads_at_every_call(*n)) continue;
      e.captured.push_back(n);
      inputs.emplace_back(n, 0);
    }
    const ir::Graph g = e.captured.empty() ? traced : ir::Graph::build(inputs, traced.outputs(), traced.name());
    e.executable = backend_->compile(g);
    it = cache_.emplace(sig, std::move(e)).first;
  }
  return it->second;
}

const ir::Graph& CompiledFunction::graph_for(const std::vector<ir::TensorType>& types) {
  return entry_for(types).executable->graph();
}

size_t CompiledFunction::captured_count(const std::vector<ir::TensorType>& types) {
  return entry_for(types).captured.size();
}

std::vector<Tensor> CompiledFunction::operator()(const std::vector<Tensor>& args) {
  bool same_types = last_ != nullptr && args.size() == last_types_.size();
  bool all_evaluated = true;
  for (size_t i = 0; i < args.size(); ++i) {
    TESSERA_CHECK(args[i].defined(), "compiled function: undefined argument");
    same_types = same_types && args[i].type() == last_types_[i];
    all_evaluated = all_evaluated && args[i].is_evaluated();
  }
  if (!same_types) {
    std::vector<ir::TensorType> types;
    types.reserve(args.size());
    for (const Tensor& a : args) types.push_back(a.type());
    last_ = nullptr;  // stays unset if tracing or compiling throws
    Entry& e = entry_for(types);
    last_types_ = std::move(types);
    last_ = &e;
  }
  if (!all_evaluated) eval(args);
  data_.clear();
  for (const Tensor& a : args) data_.push_back(a.array());
  for (const ir::NodePtr& n : last_->captured) data_.push_back(n->runtime().outputs[0]);
  std::vector<Array> outs = last_->executable->run(data_);
  data_.clear();
  std::vector<Tensor> result;
  result.reserve(outs.size());
  for (const Array& o : outs) result.push_back(Tensor::from_array(o));
  return result;
}

CompiledFunction compile(MultiFn fn, backends::Backend* backend) { return CompiledFunction(std::move(fn), backend); }

}  // namespace tessera
