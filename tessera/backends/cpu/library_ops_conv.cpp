// Placeholder until the conv kernels land.
#include "tessera/backends/cpu/lowering.h"

namespace tessera::backends::cpu {

void register_conv_lowerings(LoweringTable&) {}

}  // namespace tessera::backends::cpu
