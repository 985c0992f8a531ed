// Pipeline: runs passes in order, with the two debugging switches read from the environment on every
// run (so a test or a long-lived process can flip them): TESSERA_DUMP prints the graph after the
// selected passes, TESSERA_VERIFY_PASSES=1 checks the graph's invariants after each pass.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tessera/passes/pass.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {

namespace {

// TESSERA_DUMP=all, or a comma-separated list of pass names (spaces around names are ignored).
bool dump_selected(const std::string& pass) {
  const char* env = std::getenv("TESSERA_DUMP");
  if (!env || !*env) return false;
  std::string_view list(env);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "all" || item == pass) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

bool verify_enabled() {
  const char* env = std::getenv("TESSERA_VERIFY_PASSES");
  return env && *env && std::string_view(env) != "0";
}

// Passes promise to keep the graph's signature; this is checked always, as it is cheap and a broken
// signature would otherwise surface far away (as a bad binding in a backend).
void check_signature(const std::string& pass, const ir::Graph& before, const ir::Graph& after) {
  TESSERA_CHECK(after.inputs() == before.inputs(), "pass '{}' changed the inputs of graph '{}'", pass, before.name());
  TESSERA_CHECK(after.output_types() == before.output_types(),
                "pass '{}' changed the number or types of the outputs of graph '{}'", pass, before.name());
}

}  // namespace

Pipeline& Pipeline::add(Pass pass) {
  TESSERA_CHECK(static_cast<bool>(pass.run), "Pipeline::add: pass '{}' has no function", pass.name);
  passes_.push_back(std::move(pass));
  return *this;
}

Pipeline& Pipeline::repeat(int max_rounds) {
  TESSERA_CHECK(max_rounds >= 1, "Pipeline::repeat: max_rounds must be at least 1, got {}", max_rounds);
  max_rounds_ = max_rounds;
  return *this;
}

ir::Graph Pipeline::run(const ir::Graph& graph) const {
  const bool verify = verify_enabled();
  ir::Graph current = graph;
  for (int round = 1; round <= max_rounds_; ++round) {
    bool changed = false;
    for (const Pass& pass : passes_) {
      ir::Graph next;
      try {
        next = pass.run(current);
      } catch (const std::exception& e) {
        fail("pass '{}' failed on graph '{}': {}", pass.name, current.name(), e.what());
      }
      check_signature(pass.name, current, next);
      if (verify) {
        try {
          ir::verify(next);
        } catch (const Error& e) {
          fail("pass '{}' produced an invalid graph: {}", pass.name, e.what());
        }
      }
      const bool pass_changed = !detail::same_graph(current, next);
      changed = changed || pass_changed;
      // Later rounds only print what changed, so a dump shows each step once.
      if ((round == 1 || pass_changed) && dump_selected(pass.name)) {
        const std::string header =
            round == 1 ? "// after " + pass.name + "\n" : fmt::format("// after {} (round {})\n", pass.name, round);
        std::fputs((header + ir::print_graph(next)).c_str(), stderr);
        std::fflush(stderr);
      }
      current = std::move(next);
    }
    if (!changed) break;
  }
  return current;
}

const Pipeline& default_pipeline() {
  // Every pass is linear in the graph's size, so a few rounds to a fixed point cost little; the bound
  // guards against two rewrites undoing each other.
  static const Pipeline pipeline = [] {
    Pipeline p({canonicalize(), constant_folding(), algebraic_simplify(), stable_rewrites(), cse(), dce()});
    p.repeat(4);
    return p;
  }();
  return pipeline;
}

}  // namespace tessera::passes
