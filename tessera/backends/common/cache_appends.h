#pragma once
// A decode step's cache writes folded into the attention that reads the caches: the graph's
//   k' = index_copy(k_cache, 0, positions, k_new), v' = index_copy(v_cache, 0, positions, v_new)
//   out = kv_cache_attention(q, k', v', positions)
// can run as one step that writes the new rows as it reads them (two launches a layer fewer), when the
// updated caches have no reader but the attention and the graph's outputs, for one position (a decode
// step) and f32 rows. The backend says which attention nodes its lowering folds them into.
#include <functional>
#include <unordered_map>

#include "tessera/ir/graph.h"

namespace tessera::backends::common {

struct CacheAppend {
  const ir::Node* keys = nullptr;    // the index_copy into the key cache
  const ir::Node* values = nullptr;  // and into the value cache
};
using CacheAppendMap = std::unordered_map<const ir::Node*, CacheAppend>;  // by kv_cache_attention node

CacheAppendMap find_cache_appends(const ir::Graph& graph, const std::function<int64_t(const ir::Value&)>& uses,
                                  const std::function<bool(const ir::Node&)>& folds);

}  // namespace tessera::backends::common
