#pragma once
// Shrinks a failing graph to a small one that still fails. Every step keeps the data the failing part
// sees: an output is dropped, or a computed value is cut — replaced by a new graph input fed the exact
// data the reference backend computed for it — so what remains computes the same values as before
// and the per-output exactness flags stay valid — or an output is moved to an operand of the node
// computing it (then compared within tolerance). Steps are kept while the predicate still fails.
#include <functional>
#include <vector>

#include "tessera/ir/graph.h"

namespace tessera::testing::fuzz {

struct Case {
  ir::Graph graph;
  std::vector<Array> inputs;  // per graph input
  std::vector<bool> exact;    // per graph output
};

// `fails` decides whether a candidate still shows the bug. `max_checks` bounds the calls to it.
Case shrink(const Case& failing, const std::function<bool(const Case&)>& fails, int max_checks = 400);

// Graph inputs no output depends on, dropped (with their data).
Case without_unused_inputs(const Case& c);

}  // namespace tessera::testing::fuzz
