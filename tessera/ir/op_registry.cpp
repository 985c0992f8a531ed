#include <algorithm>

#include "tessera/ir/op_def.h"

// The op families are defined a layer above (tessera_ops, in tessera/ops/register_all.cpp): their
// gradient rules are written with Tensor and ops::, which build IR nodes. The reference is weak, so
// that the IR links without that layer; tessera_ops makes every program that links it pull the
// definition in (CMake: -Wl,--undefined=tessera_register_all_ops, cmake/layers.cmake).
extern "C" __attribute__((weak)) void tessera_register_all_ops(tessera::ir::OpRegistry& registry);

namespace tessera::ir {

OpRegistry& OpRegistry::instance() {
  // Registration is an explicit call rather than static initialisers, which a static library's
  // linker would silently drop.
  static OpRegistry* registry = [] {
    TESSERA_CHECK(tessera_register_all_ops != nullptr,
                  "no op is defined: link the tessera_ops library (the tessera target does), with "
                  "-Wl,--undefined=tessera_register_all_ops where it is linked as an archive");
    auto* r = new OpRegistry();
    tessera_register_all_ops(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::add(OpDef def) {
  TESSERA_CHECK(!def.name.empty(), "OpRegistry: op with an empty name");
  TESSERA_CHECK(find(def.name) == nullptr, "OpRegistry: op '{}' registered twice", def.name);
  TESSERA_CHECK(static_cast<bool>(def.infer), "OpRegistry: op '{}' has no shape inference", def.name);
  TESSERA_CHECK(static_cast<bool>(def.reference), "OpRegistry: op '{}' has no reference implementation", def.name);
  defs_.push_back(std::make_unique<OpDef>(std::move(def)));
  by_name_[defs_.back()->name] = defs_.back().get();
}

const OpDef* OpRegistry::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const OpDef& OpRegistry::get(const std::string& name) const {
  const OpDef* d = find(name);
  TESSERA_CHECK(d != nullptr, "unknown op '{}'", name);
  return *d;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& d : defs_) out.push_back(d->name);
  std::sort(out.begin(), out.end());
  return out;
}

std::string describe_op(const std::string& op, const std::vector<TensorType>& inputs) {
  std::string s = fmt::format("op '{}' with inputs (", op);
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + type_str(inputs[i]);
  return s + ")";
}

}  // namespace tessera::ir
