// Tensors made from attributes alone: full is ConstantOfShape (small in the file whatever its size);
// arange and eye are computed by Tessera's own reference kernel at export and stored as initializers,
// so their values are Tessera's exactly.
#include "tessera/io/onnx/export_lower.h"
#include "tessera/ir/op_def.h"

namespace tessera::io::onnx {

namespace {

std::vector<OVal> precomputed(LowerContext& c) {
  const std::vector<Array> values = c.node.op().reference({}, c.attrs(), c.node.output_types());
  return {c.b.constant(values.at(0), c.node.op_name())};
}

}  // namespace

void add_creation_exports(LoweringTable& t) {
  t.add("full", [](LowerContext& c) -> std::vector<OVal> {
    const Array value = Array::full(c.out_dtype(), {1}, c.attrs().get_float("value"));
    return {c.op("ConstantOfShape", {c.b.i64s(c.out_shape())}, [value](pb::NodeProto& n) {
      pb::AttributeProto* a = n.add_attribute();
      a->set_name("value");
      a->set_type(pb::AttributeProto::TENSOR);
      fill_tensor(*a->mutable_t(), "value", value);
    })};
  });
  t.add("arange", precomputed);
  t.add("eye", precomputed);
}

}  // namespace tessera::io::onnx
