// matmul with NumPy semantics is ONNX's MatMul as it is (1-D operands, broadcast batch axes); the
// operands are cast to the result dtype first (Tessera promotes them). ONNX has no 8-bit or boolean
// MatMul, so those compute in int32 and are cast back.
#include "tessera/io/onnx/export_lower.h"

namespace tessera::io::onnx {

void add_linalg_exports(LoweringTable& t) {
  t.add("matmul", [](LowerContext& c) -> std::vector<OVal> {
    GraphBuilder& b = c.b;
    const DType dt = c.out_dtype();
    const bool narrow = dt == DType::u8 || dt == DType::i8 || dt == DType::boolean;
    const DType compute = narrow ? DType::i32 : dt;
    const OVal p = b.op("MatMul", {b.cast(c.in[0], compute), b.cast(c.in[1], compute)}, compute, c.out_shape());
    return {b.cast(p, dt)};
  });
}

}  // namespace tessera::io::onnx
