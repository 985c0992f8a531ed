#pragma once
// A structural checker for the StableHLO text the exporter writes, independent of the emitter: it
// reads the text back and verifies that every SSA value is defined exactly once before it is used
// (regions see the values around them, not the other way round), that each op's operands have the
// types its signature states and its results the stated types, that the shape rules of the common
// ops hold (elementwise, convert, broadcast_in_dim, reshape, transpose, slice, concatenate, pad,
// compare, select, dot_general, reduce, iota, constants), that region blocks take and return what
// their op needs, and that `return` matches the function's signature. It is no MLIR verifier, but it
// catches the mistakes an emitter makes, without needing MLIR on this machine.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/io/stablehlo/export.h"

namespace tessera::io::stablehlo {

struct CheckedModule {
  std::vector<std::string> argument_types;  // @main's, as written ("tensor<2x3xf32>")
  std::vector<std::string> result_types;
  std::map<std::string, int64_t> op_counts;  // "stablehlo.add" -> 3, ...
  int64_t values = 0;                        // SSA values defined (results and block arguments)
};

// Throws tessera::Error "stablehlo check: line N: <what>" at the first violation.
CheckedModule check_module(const std::string& text);

// check_module, plus: @main's signature is the module's arguments and results (graph inputs, lifted
// constants, graph outputs, in order).
CheckedModule check_exported(const Module& module);

}  // namespace tessera::io::stablehlo
