#pragma once
// A KV cache's new rows are cast to the cache's type, then written (index_copy): on a device backend the
// index_copy converts as it writes instead (its `convert` attribute), so the cast is not a launch of its
// own (two per layer of a decode step, 2,048-row passes of a prefill). Same values: the rounding is the
// cast's, to nearest even.
#include "tessera/core/dtype.h"
#include "tessera/ir/graph.h"

namespace tessera::backends::common {

// Whether the backend's index_copy writes rows of `from` into a cache of `to`, converting each value.
using ConvertsOnWrite = bool (*)(DType from, DType to);

// The graph with index_copy(x, axis, index, cast(y, x's dtype)) made index_copy(x, axis, index, y) with
// convert where the cast has no other use and `converts(y's dtype, x's dtype)` (the graph itself when none).
ir::Graph convert_on_write(const ir::Graph& graph, ConvertsOnWrite converts);

}  // namespace tessera::backends::common
