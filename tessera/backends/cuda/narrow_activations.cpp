#include "tessera/backends/cuda/narrow_activations.h"

#include "tessera/ir/node.h"
#include "tessera/lower/fusion.h"
#include "tessera/passes/rewrite.h"

namespace tessera::backends::cuda {

ir::Graph narrow_product_activations(const ir::Graph& graph) {
  passes::detail::Rewriter rw(graph, "narrow_product_activations");
  return rw.run([&rw](const ir::Node& node, const std::vector<ir::Value>& inputs) -> std::optional<std::vector<ir::Value>> {
    if (node.op_name() != "quantized_matmul" || node.attrs().has("output_dtype")) return std::nullopt;
    if (node.input(0).dtype() != DType::f32 || node.output_types()[0].dtype != DType::f32) return std::nullopt;
    // Only where the cast joins the generated kernel that makes x: after a graph input or a library
    // call (attention) it would be a pass of its own, slower than the product step's own rounding.
    const ir::Node* producer = rw.producer(inputs[0]);
    if (producer == nullptr || !lower::can_generate(*producer, /*half_types=*/true)) return std::nullopt;
    const DType half = tensor_core_activation_type(node);
    if (half == DType::f32) return std::nullopt;
    const ir::Value x = ir::make_node1("cast", {inputs[0]}, ir::Attrs{{"dtype", half}});
    ir::Attrs attrs = node.attrs();
    attrs.set("output_dtype", std::string(dtype_name(DType::f32)));
    return std::vector<ir::Value>{ir::make_node1("quantized_matmul", {x, inputs[1]}, std::move(attrs))};
  });
}

}  // namespace tessera::backends::cuda
