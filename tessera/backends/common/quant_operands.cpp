#include "tessera/backends/common/quant_operands.h"

#include "tessera/core/error.h"

namespace tessera::backends::common {

bool parse_quant_operands(const ir::Node& node, QuantOperands& q) {
  try {
    q.type = quant::parse_type(node.attrs().get_string("type"));
  } catch (const Error&) {
    return false;
  }
  const ir::Value& w = node.input(node.op_name() == "dequantize" ? 0 : 1);
  if (w.dtype() != DType::u8 || w.rank() < 1) return false;
  q.row_bytes = w.shape().back();
  const quant::TypeTraits& t = quant::type_traits(q.type);
  if (q.row_bytes <= 0 || q.row_bytes % t.type_size != 0) return false;
  q.k = q.row_bytes / t.type_size * t.block_size;
  return true;
}

}  // namespace tessera::backends::common
