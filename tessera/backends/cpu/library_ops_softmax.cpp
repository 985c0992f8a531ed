// Placeholder until the softmax kernels land.
#include "tessera/backends/cpu/lowering.h"

namespace tessera::backends::cpu {

void register_softmax_lowerings(LoweringTable&) {}

}  // namespace tessera::backends::cpu
