#pragma once
// The CPU's copy and reference-fallback steps, as the shared lowering asks for them (fallback.cpp).
#include "tessera/backends/common/lowering.h"

namespace tessera::backends::cpu {

const common::StepFactory& host_steps();

}  // namespace tessera::backends::cpu
