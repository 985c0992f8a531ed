#pragma once
// Where a node comes from, for messages a user can act on: the modules and user-level ops that were
// active (innermost last) while the node was built, e.g. "MultiheadAttention 'attn' > ops::linear".
// Scopes nest per thread; a node records the label of the innermost scope when it is created. Nodes
// built outside any scope (a graph written by hand, a pass's rewrite) have no origin.
#include <memory>
#include <string>
#include <string_view>

namespace tessera::ir {

class OriginScope {
 public:
  explicit OriginScope(std::string_view label);
  // Continues an existing origin (a pass rebuilding a node, autodiff differentiating one), with an
  // optional prefix such as "gradient of".
  explicit OriginScope(const std::shared_ptr<const std::string>& origin, std::string_view prefix = {});
  ~OriginScope();
  OriginScope(const OriginScope&) = delete;
  OriginScope& operator=(const OriginScope&) = delete;

 private:
  std::shared_ptr<const std::string> saved_;
};

// The label of the innermost scope on this thread, or null outside every scope.
const std::shared_ptr<const std::string>& current_origin();

}  // namespace tessera::ir
