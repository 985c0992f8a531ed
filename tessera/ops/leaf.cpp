// Leaves of the graph: `input` (a placeholder bound at run time) and `constant` (holds its data).
#include "tessera/ir/op_def.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

void register_leaf_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "input",
      .attrs = {{"name", ir::AttrKind::String}, {"dtype", ir::AttrKind::DType}, {"shape", ir::AttrKind::Ints}},
      .traits = ir::kLeaf,
      .infer = [](const std::vector<ir::TensorType>&, const ir::Attrs& a) -> std::vector<ir::TensorType> {
        for (int64_t d : a.get_ints("shape")) {
          TESSERA_CHECK(d >= 0, "input '{}': negative dimension in shape {}", a.get_string("name"),
                        shape_str(a.get_ints("shape")));
        }
        shape_numel(a.get_ints("shape"));  // throws if the element count overflows
        return {{a.get_dtype("dtype"), a.get_ints("shape")}};
      },
      .reference = [](const std::vector<Array>&, const ir::Attrs& a, const std::vector<ir::TensorType>&)
          -> std::vector<Array> { fail("input '{}' was not bound to a value", a.get_string("name")); },
  });
  r.add(ir::OpDef{
      .name = "constant",
      .attrs = {{"value", ir::AttrKind::Tensor}, {"name", ir::AttrKind::String, false}},
      .traits = ir::kLeaf,
      .infer = [](const std::vector<ir::TensorType>&, const ir::Attrs& a) -> std::vector<ir::TensorType> {
        const Array& v = a.get_tensor("value");
        return {{v.dtype(), v.shape()}};
      },
      .reference = [](const std::vector<Array>&, const ir::Attrs& a,
                      const std::vector<ir::TensorType>&) -> std::vector<Array> { return {a.get_tensor("value")}; },
  });
}

}  // namespace tessera::ops
