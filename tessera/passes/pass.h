#pragma once
// Graph → graph passes. Each pass is a named function; a Pipeline runs a list of them. With
// TESSERA_DUMP=all (or a comma-separated list of pass names) the graph is printed to stderr after
// each selected pass, in the IR's text form.
#include <functional>
#include <string>
#include <vector>

#include "tessera/ir/graph.h"

namespace tessera::passes {

struct Pass {
  std::string name;
  std::function<ir::Graph(const ir::Graph&)> run;
};

class Pipeline {
 public:
  Pipeline() = default;
  explicit Pipeline(std::vector<Pass> passes) : passes_(std::move(passes)) {}
  Pipeline& add(Pass pass);
  // Runs every pass in order (verifying the graph after each when TESSERA_VERIFY_PASSES=1).
  ir::Graph run(const ir::Graph& graph) const;
  const std::vector<Pass>& passes() const { return passes_; }
  // Runs the whole list again while a round still changes the graph, at most `max_rounds` rounds in
  // all (1, the default, runs the list once).
  Pipeline& repeat(int max_rounds);
  int max_rounds() const { return max_rounds_; }

 private:
  std::vector<Pass> passes_;
  int max_rounds_ = 1;
};

// The individual passes. None changes what the graph computes (up to floating-point rounding for the
// stable rewrites, which only make it more accurate); inputs and outputs keep their order and types.
Pass canonicalize();        // commutative operands in a fixed order, scalar constants on the right, ...
Pass constant_folding();    // evaluates nodes whose inputs are all small constants (reference backend)
Pass cse();                 // merges identical pure computations; leaves and random ops never merge
Pass dce();                 // drops nodes no output depends on
Pass algebraic_simplify();  // x*1, x+0, x-0, x/1, transpose∘transpose, reshape chains, ...
Pass stable_rewrites();     // log(1+x)→log1p, exp(x)-1→expm1, log(softmax)→log_softmax, ...
Pass fill_per_use();        // a `full` read by several nodes: one copy per reader (lowering; undoes CSE)

// The default optimisation pipeline that backends run before lowering.
const Pipeline& default_pipeline();

}  // namespace tessera::passes
