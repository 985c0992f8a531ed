#pragma once
// The gradient of an op as the gradient of its decomposition: the op's `decompose` rebuilt on the
// node's own inputs, then differentiated by vjp(). For fused ops (attention over a cache, index_copy)
// whose backward is the backward of the composite they fuse, so the rule cannot drift from the forward.
#include <vector>

#include "tessera/ir/op_def.h"

namespace tessera::autodiff {

// One cotangent per input of c.node (undefined for integer and boolean inputs). The op must declare
// a decomposition.
std::vector<ir::Value> vjp_through_decomposition(const ir::VjpContext& c);

}  // namespace tessera::autodiff
