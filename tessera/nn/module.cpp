#include "tessera/nn/module.h"

#include <set>

#include "tessera/ir/node.h"
#include "tessera/ir/origin.h"
#include "tessera/ops/ops.h"

namespace tessera::nn {

Tensor Module::operator()(const Tensor& x) {
  const ir::OriginScope origin(origin_label());
  return forward(x);
}

std::string Module::origin_label() const {
  return registered_name_.empty() ? name() : fmt::format("{} '{}'", name(), registered_name_);
}

Tensor Module::forward(const Tensor&) {
  fail("{}: this module takes no single tensor input; call its own forward overload", name());
}

void Module::register_parameter(const std::string& name, Tensor* slot) {
  TESSERA_CHECK(slot != nullptr && slot->defined(), "{}: parameter '{}' is undefined", this->name(), name);
  for (const auto& p : params_) TESSERA_CHECK(p.first != name, "{}: parameter '{}' registered twice", this->name(), name);
  if (!slot->value().node()->is_leaf()) *slot = Tensor::from_array(slot->array());
  slot->set_requires_grad(true);
  slot->value().node()->runtime().variable = true;
  params_.emplace_back(name, slot);
  homes_[slot] = *slot;
}

void Module::register_buffer(const std::string& name, Tensor* slot) {
  TESSERA_CHECK(slot != nullptr && slot->defined(), "{}: buffer '{}' is undefined", this->name(), name);
  if (!slot->value().node()->is_leaf()) *slot = Tensor::from_array(slot->array());
  slot->value().node()->runtime().variable = true;
  buffers_.emplace_back(name, slot);
  homes_[slot] = *slot;
}

void Module::commit_slot(Tensor* slot, bool parameter) {
  Tensor& home = homes_[slot];
  if (home.defined() && slot->value() == home.value()) return;
  const Array value = slot->array();
  if (home.defined() && home.dtype() == value.dtype() && home.shape() == value.shape()) {
    home.assign(value);  // in place: the leaf keeps its identity
  } else {
    const bool grad = home.defined() ? home.requires_grad() : parameter;
    home = Tensor::from_array(value.copy());
    home.set_requires_grad(grad);
    home.value().node()->runtime().variable = true;
  }
  *slot = home;
}

void Module::commit() {
  for (auto& [n, p] : params_) commit_slot(p, true);
  for (auto& [n, b] : buffers_) commit_slot(b, false);
  for (auto& [n, c] : children_) c->commit();
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  TESSERA_CHECK(module != nullptr, "{}: submodule '{}' is null", this->name(), name);
  for (const auto& c : children_) TESSERA_CHECK(c.first != name, "{}: submodule '{}' registered twice", this->name(), name);
  if (module->registered_name_.empty()) module->registered_name_ = name;
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, bool buffers, std::vector<std::pair<std::string, Tensor*>>& out) {
  for (auto& [n, slot] : buffers ? buffers_ : params_) out.emplace_back(prefix + n, slot);
  for (auto& [n, child] : children_) child->collect(prefix + n + ".", buffers, out);
}

std::vector<std::pair<std::string, Tensor*>> Module::named_parameters() {
  std::vector<std::pair<std::string, Tensor*>> out;
  collect("", false, out);
  return out;
}

std::vector<std::pair<std::string, Tensor*>> Module::named_buffers() {
  std::vector<std::pair<std::string, Tensor*>> out;
  collect("", true, out);
  return out;
}

std::vector<Tensor*> Module::parameters() {
  std::vector<Tensor*> out;
  for (auto& [n, p] : named_parameters()) out.push_back(p);
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_children() const {
  std::vector<std::pair<std::string, Module*>> out;
  for (const auto& [n, c] : children_) out.emplace_back(n, c.get());
  return out;
}

int64_t Module::num_parameters() {
  int64_t n = 0;
  for (auto& [name, p] : named_parameters()) n += p->numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, c] : children_) c->train(on);
}

void Module::to(DType dtype) {
  TESSERA_CHECK(is_floating(dtype), "Module::to: expected a floating dtype, got {}", dtype_name(dtype));
  for (auto& [n, p] : named_parameters()) {
    if (is_floating(p->dtype()) && p->dtype() != dtype) *p = Tensor::from_array(p->array().astype(dtype));
  }
  for (auto& [n, b] : named_buffers()) {
    if (is_floating(b->dtype()) && b->dtype() != dtype) *b = Tensor::from_array(b->array().astype(dtype));
  }
  commit();
}

void Module::requires_grad(bool on) {
  commit();
  for (auto& [n, p] : named_parameters()) p->set_requires_grad(on);
}

void Module::zero_grad() {
  for (auto& [n, p] : named_parameters()) p->zero_grad();
}

StateDict Module::state_dict() {
  std::vector<Tensor> all;
  auto params = named_parameters();
  auto buffers = named_buffers();
  for (auto& [n, p] : params) all.push_back(*p);
  for (auto& [n, b] : buffers) all.push_back(*b);
  tessera::eval(all);
  StateDict out;
  for (auto& [n, p] : params) out[n] = p->array();
  for (auto& [n, b] : buffers) out[n] = b->array();
  return out;
}

namespace {

// "'0.weight' f32[4, 3], '0.bias' f32[4] and 3 more": the first few names with their types.
template <class TypeOf>
std::string name_list(const std::vector<std::string>& names, const TypeOf& type_of) {
  constexpr size_t kShown = 5;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) {
    out += fmt::format("{}'{}' {}", i ? ", " : "", names[i], type_of(names[i]));
  }
  if (names.size() > kShown) out += fmt::format(" and {} more", names.size() - kShown);
  return out;
}

}  // namespace

IncompatibleKeys Module::load_state_dict(const StateDict& state, bool strict) {
  std::map<std::string, Tensor*> slots;
  for (auto& [n, p] : named_parameters()) slots[n] = p;
  for (auto& [n, b] : named_buffers()) slots[n] = b;
  IncompatibleKeys keys;
  for (const auto& [n, slot] : slots) {
    if (!state.count(n)) keys.missing_keys.push_back(n);
  }
  for (const auto& [n, a] : state) {
    if (!slots.count(n)) keys.unexpected_keys.push_back(n);
  }
  if (strict && !keys.empty()) {
    std::string message = "load_state_dict: the state dict does not match the module";
    if (!keys.missing_keys.empty()) {
      message += fmt::format(
          "; missing from the state dict: {}",
          name_list(keys.missing_keys, [&](const std::string& n) { return ir::type_str(slots.at(n)->type()); }));
    }
    if (!keys.unexpected_keys.empty()) {
      message += fmt::format("; unexpected (the module has no such tensor): {}",
                             name_list(keys.unexpected_keys, [&](const std::string& n) {
                               const Array& a = state.at(n);
                               return dtype_name(a.dtype()) + shape_str(a.shape());
                             }));
    }
    const std::string hint = explain_key_differences(keys);
    if (!hint.empty()) message += ". " + hint;
    throw Error(message);
  }
  // Validate every pairing first so that a failed load leaves the module as it was. Mismatches are
  // listed together, in registration order, as PyTorch lists its size mismatches.
  std::vector<std::string> mismatches;
  auto validate = [&](const std::string& n, const Tensor& t) {
    auto it = state.find(n);
    if (it == state.end()) return;
    const Array& a = it->second;
    if (a.shape() != t.shape()) {
      mismatches.push_back(fmt::format("'{}' has shape {} in the state dict but {} in the module", n,
                                       shape_str(a.shape()), shape_str(t.shape())));
    } else if (a.dtype() != t.dtype() && !(is_floating(a.dtype()) && is_floating(t.dtype()))) {
      mismatches.push_back(fmt::format("'{}' is {} in the state dict but {} in the module", n, dtype_name(a.dtype()),
                                       dtype_name(t.dtype())));
    }
  };
  for (auto& [n, p] : named_parameters()) validate(n, *p);
  for (auto& [n, b] : named_buffers()) validate(n, *b);
  if (!mismatches.empty()) {
    std::string message = "load_state_dict: " + mismatches[0];
    for (size_t i = 1; i < mismatches.size(); ++i) message += "; " + mismatches[i];
    throw Error(message);
  }
  for (auto& [n, slot] : slots) {
    auto it = state.find(n);
    if (it == state.end()) continue;
    Tensor& t = *slot;
    // Written into the registered leaves (PyTorch copies too), so compiled functions see the values.
    t = Tensor::from_array(it->second.dtype() == t.dtype() ? it->second : it->second.astype(t.dtype()));
  }
  commit();
  return keys;
}

void Module::summarize(const std::string& prefix, int depth, std::string& out) const {
  out += std::string(static_cast<size_t>(depth) * 2, ' ') + (prefix.empty() ? "" : prefix + ": ") + name() + "\n";
  for (const auto& [n, p] : params_) {
    out += std::string(static_cast<size_t>(depth) * 2 + 2, ' ') + n + " " + ir::type_str(p->type()) + "\n";
  }
  for (const auto& [n, c] : children_) c->summarize(n, depth + 1, out);
}

std::string Module::summary() const {
  std::string out;
  summarize("", 0, out);
  return out;
}

void materialize(Module& module) {
  auto params = module.named_parameters();
  auto buffers = module.named_buffers();
  std::vector<Tensor> all;
  for (auto& [n, p] : params) all.push_back(*p);
  for (auto& [n, b] : buffers) all.push_back(*b);
  tessera::eval(all);
  module.commit();
}

}  // namespace tessera::nn
