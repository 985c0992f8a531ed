#pragma once
// Small instances of every registered op (several for ops with dtype- or attribute-dependent
// lowerings), with example inputs: the structural tests export each one, and the dump test writes
// them with Tessera's outputs for tools/xla/check_ops.py to run on XLA.
#include <functional>
#include <string>
#include <vector>

#include "tessera/tessera.h"

namespace tessera::test {

struct OpCase {
  std::string op;     // the registered op this case exercises
  std::string label;  // unique, usable as a file name
  std::vector<Array> inputs;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn;
};

std::vector<OpCase> op_cases();

// The case traced on placeholders of its inputs' types.
ir::Graph case_graph(const OpCase& c);

}  // namespace tessera::test
