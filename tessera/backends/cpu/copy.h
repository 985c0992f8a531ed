#pragma once
// Carries out a CopyPlan (backends/common/program.h) in host memory.
#include <cstddef>

#include "tessera/backends/common/program.h"

namespace tessera::backends::cpu {

// Splits large copies over `pool` (null: this thread only) and allocates nothing (for up to 16
// merged axes).
void run_copy(const common::CopyPlan& plan, const std::byte* src_base, std::byte* dst_base, runtime::ThreadPool* pool);

}  // namespace tessera::backends::cpu
