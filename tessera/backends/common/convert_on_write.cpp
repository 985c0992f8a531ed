#include "tessera/backends/common/convert_on_write.h"

#include "tessera/ir/node.h"
#include "tessera/passes/rewrite.h"

namespace tessera::backends::common {

ir::Graph convert_on_write(const ir::Graph& graph, ConvertsOnWrite converts) {
  passes::detail::Rewriter rw(graph, "convert_on_write");
  return rw.run([&rw, converts](const ir::Node& node,
                                const std::vector<ir::Value>& inputs) -> std::optional<std::vector<ir::Value>> {
    if (node.op_name() != "index_copy" || node.attrs().has("convert")) return std::nullopt;
    const ir::Node* cast = rw.producer(inputs[2], "cast");
    if (cast == nullptr || rw.uses(inputs[2]) != 1) return std::nullopt;
    const ir::Value& y = cast->input(0);
    if (!converts(y.dtype(), node.input(0).dtype())) return std::nullopt;
    ir::Attrs attrs = node.attrs();
    attrs.set("convert", true);
    return std::vector<ir::Value>{ir::make_node1("index_copy", {inputs[0], inputs[1], y}, std::move(attrs))};
  });
}

}  // namespace tessera::backends::common
