#pragma once
// Checks a lowered Program before it runs: every buffer a step reads was written by an earlier step
// (or is an input or constant), no step writes an input or constant, every output is written, and the
// memory plan keeps buffers that live at the same time apart. A failure is a bug in the lowering; the
// caller turns it into an internal compiler error naming the step's node.
#include <optional>
#include <string>
#include <vector>

#include "tessera/backends/common/program.h"

namespace tessera::backends::common {

struct ProgramFault {
  int32_t step = -1;  // the offending step, or -1 for a fault of the whole program
  std::string what;
};

// `access` lists each step's buffers (parallel to p.steps). The memory plan's pairwise check is
// quadratic; it runs when `check_plan` is set.
std::optional<ProgramFault> verify_program(const Program& p, const std::vector<runtime::StepAccess>& access,
                                           bool check_plan);

// Whether the quadratic checks run: always in debug builds; in release builds with
// $TESSERA_VERIFY_PROGRAM=1 (tests set it) or for programs of at most `small` arena buffers.
bool thorough_program_checks(size_t arena_buffers);

}  // namespace tessera::backends::common
