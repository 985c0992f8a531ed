// linear (PyTorch's F.linear) as a composite: matmul(x, transpose(weight)) + bias. The shape of the
// composite is what the CPU backend fuses (library_ops_matmul.cpp: a permute of the last two axes is read
// in place as a transposed operand, a following [out] add becomes the GEMM's bias epilogue), so it must
// stay exactly this.
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"

namespace tessera::ops {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  std::vector<ir::TensorType> types = {x.type(), weight.type()};
  if (bias.defined()) types.push_back(bias.type());
  const char* op = "linear";
  if (weight.rank() != 2)
    ir::op_fail(op, types, "weight must be 2-D [out_features, in_features], got rank {}", weight.rank());
  if (x.rank() < 1) ir::op_fail(op, types, "input must have at least one axis ([..., in_features])");
  if (!is_floating(x.dtype()) || !is_floating(weight.dtype()) || (bias.defined() && !is_floating(bias.dtype()))) {
    ir::op_fail(op, types, "input, weight and bias must be floating");
  }
  if (x.dim(-1) != weight.dim(1)) {
    ir::op_fail(op, types,
                "input has {} features (last axis) but weight [out, in] = {} expects {}; the weight is [out, in] as in "
                "PyTorch, not [in, out]",
                x.dim(-1), shape_str(weight.shape()), weight.dim(1));
  }
  if (bias.defined() && bias.shape() != Shape{weight.dim(0)}) {
    ir::op_fail(op, types, "bias must be [{}] (one per output feature), got {}", weight.dim(0),
                shape_str(bias.shape()));
  }
  const Tensor y = matmul(x, transpose(weight));
  return bias.defined() ? y + bias : y;
}

}  // namespace tessera::ops
