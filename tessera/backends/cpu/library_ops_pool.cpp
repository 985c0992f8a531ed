// Placeholder until the pool kernels land.
#include "tessera/backends/cpu/lowering.h"

namespace tessera::backends::cpu {

void register_pool_lowerings(LoweringTable&) {}

}  // namespace tessera::backends::cpu
