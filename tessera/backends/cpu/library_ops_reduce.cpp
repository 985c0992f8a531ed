// Placeholder until the reduce kernels land.
#include "tessera/backends/cpu/lowering.h"

namespace tessera::backends::cpu {

void register_reduce_lowerings(LoweringTable&) {}

}  // namespace tessera::backends::cpu
