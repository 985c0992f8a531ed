// tessera ops: every registered op with its arity, attributes, traits and whether it has a gradient
// rule (VJP) and a decomposition. --markdown prints the same as a table for the documentation.
#include <algorithm>
#include <iostream>
#include <memory>

#include "command.h"
#include "tessera/ir/op_def.h"

namespace tessera::cli {

namespace {

struct OpsOptions {
  std::string filter;
  bool markdown = false;
};

const char* short_kind(ir::AttrKind kind) {
  switch (kind) {
    case ir::AttrKind::Int:
      return "int";
    case ir::AttrKind::Float:
      return "float";
    case ir::AttrKind::Bool:
      return "bool";
    case ir::AttrKind::String:
      return "string";
    case ir::AttrKind::Ints:
      return "ints";
    case ir::AttrKind::Floats:
      return "floats";
    case ir::AttrKind::DType:
      return "dtype";
    case ir::AttrKind::Tensor:
      return "tensor";
  }
  return "?";
}

std::string arity(const ir::OpDef& op) {
  if (op.max_inputs < 0) return fmt::format("{}+", op.min_inputs);
  if (op.min_inputs == op.max_inputs) return std::to_string(op.min_inputs);
  return fmt::format("{}..{}", op.min_inputs, op.max_inputs);
}

std::string traits(const ir::OpDef& op) {
  static const std::pair<ir::OpTrait, const char*> kNames[] = {
      {ir::kElementwise, "elementwise"}, {ir::kReduction, "reduction"}, {ir::kView, "view"},
      {ir::kFusable, "fusable"},         {ir::kInPlace, "inplace"},     {ir::kLeaf, "leaf"},
      {ir::kRandom, "random"},
  };
  std::string out;
  for (const auto& [trait, name] : kNames) {
    if (op.has(trait)) out += (out.empty() ? "" : ",") + std::string(name);
  }
  return out.empty() ? "-" : out;
}

// "axes:ints, keepdims?:bool" — a '?' marks an optional attribute.
std::string attrs(const ir::OpDef& op) {
  std::string out;
  for (const ir::AttrSpec& a : op.attrs) {
    out += fmt::format("{}{}{}:{}", out.empty() ? "" : ", ", a.name, a.required ? "" : "?", short_kind(a.kind));
  }
  return out.empty() ? "-" : out;
}

int run_ops(const OpsOptions& options) {
  const ir::OpRegistry& registry = ir::OpRegistry::instance();
  struct Row {
    std::string name, inputs, vjp, decomp, traits, attrs;
  };
  std::vector<Row> rows;
  for (const std::string& name : registry.names()) {
    if (!options.filter.empty() && name.find(options.filter) == std::string::npos) continue;
    const ir::OpDef& op = registry.get(name);
    rows.push_back({name, arity(op), op.vjp ? "yes" : "no", op.decompose ? "yes" : "no", traits(op), attrs(op)});
  }
  const Row header{"op", "inputs", "vjp", "decomp", "traits", "attributes"};
  if (options.markdown) {
    auto line = [](const Row& r) {
      return fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", r.name, r.inputs, r.vjp, r.decomp, r.traits, r.attrs);
    };
    std::cout << "| op | inputs | vjp | decomp | traits | attributes |\n|---|---|---|---|---|---|\n";
    for (const Row& r : rows) std::cout << line(r);
    return kExitOk;
  }
  size_t w_name = header.name.size(), w_inputs = header.inputs.size(), w_traits = header.traits.size();
  for (const Row& r : rows) {
    w_name = std::max(w_name, r.name.size());
    w_inputs = std::max(w_inputs, r.inputs.size());
    w_traits = std::max(w_traits, r.traits.size());
  }
  auto print = [&](const Row& r) {
    std::cout << fmt::format("{:<{}}  {:<{}}  {:<3}  {:<6}  {:<{}}  {}\n", r.name, w_name, r.inputs, w_inputs, r.vjp,
                             r.decomp, r.traits, w_traits, r.attrs);
  };
  print(header);
  for (const Row& r : rows) print(r);
  std::cout << fmt::format("{} op{}\n", rows.size(), rows.size() == 1 ? "" : "s");
  return kExitOk;
}

}  // namespace

Command add_ops_command(CLI::App& root) {
  auto options = std::make_shared<OpsOptions>();
  CLI::App* app = root.add_subcommand("ops", "List the registered ops: inputs, attributes, traits, VJP, decomposition");
  app->add_option("FILTER", options->filter, "Only ops whose name contains this text");
  app->add_flag("--markdown", options->markdown, "Print a Markdown table (for the documentation)");
  return {app, [options] { return run_ops(*options); }};
}

}  // namespace tessera::cli
