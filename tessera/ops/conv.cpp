#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

void register_conv_ops(ir::OpRegistry& r) { (void)r; }

}  // namespace tessera::ops
