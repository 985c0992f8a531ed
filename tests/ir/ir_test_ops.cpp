#include "ir_test_ops.h"

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"

namespace tessera::test {

std::atomic<int> test_count_calls{0};

namespace {
using ir::AttrKind;
using ir::Attrs;
using ir::TensorType;

void add_ops() {
  ir::OpRegistry& r = ir::OpRegistry::instance();
  r.add(ir::OpDef{
      .name = "test.attrs",
      .min_inputs = 1,
      .max_inputs = 1,
      .attrs = {{"i", AttrKind::Int, false},
                {"f", AttrKind::Float, false},
                {"b", AttrKind::Bool, false},
                {"s", AttrKind::String, false},
                {"is", AttrKind::Ints, false},
                {"fs", AttrKind::Floats, false},
                {"dt", AttrKind::DType, false},
                {"t", AttrKind::Tensor, false}},
      .infer = [](const std::vector<TensorType>& in, const Attrs&) { return in; },
      .reference = [](const std::vector<Array>& in, const Attrs&, const std::vector<TensorType>&) { return in; },
  });
  r.add(ir::OpDef{
      .name = "test.split2",
      .min_inputs = 1,
      .max_inputs = 1,
      .infer = [](const std::vector<TensorType>& in, const Attrs&) -> std::vector<TensorType> {
        return {in[0], {DType::i64, in[0].shape}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs&,
                      const std::vector<TensorType>&) -> std::vector<Array> {
        return {in[0], in[0].astype(DType::i64)};
      },
      .vjp = [](const ir::VjpContext& c) -> std::vector<ir::Value> { return {c.cotangent(0)}; },
  });
  r.add(ir::OpDef{
      .name = "test.count",
      .min_inputs = 1,
      .max_inputs = 1,
      .infer = [](const std::vector<TensorType>& in, const Attrs&) { return in; },
      .reference =
          [](const std::vector<Array>& in, const Attrs&, const std::vector<TensorType>&) {
            ++test_count_calls;
            return in;
          },
      .vjp = [](const ir::VjpContext& c) -> std::vector<ir::Value> { return {c.cotangent(0)}; },
  });
}
}  // namespace

void register_ir_test_ops() {
  static const bool done = (add_ops(), true);
  (void)done;
}

}  // namespace tessera::test
