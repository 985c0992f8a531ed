#pragma once
// The GGUF-block operand of quantized_matmul and dequantize as a GPU backend reads it: the block type
// (the node's "type" attribute) and the row length in bytes and in values. Shared by the CUDA and
// Vulkan lowerings, which then ask whether their kernels decode that type.
#include <cstdint>

#include "tessera/ir/graph.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::backends::common {

struct QuantOperands {
  quant::GgmlType type = quant::GgmlType::f32;
  int64_t k = 0, n = 0, m = 0, row_bytes = 0;  // values and bytes per weight row; n, m set by the lowering
};

/// The node's block type and row size, or false when its type attribute is unknown or its u8 rows are
/// not whole blocks.
bool parse_quant_operands(const ir::Node& node, QuantOperands& q);

}  // namespace tessera::backends::common
