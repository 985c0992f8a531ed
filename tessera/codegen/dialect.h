#pragma once
// A C-family dialect as a table: everything the emitter writes that differs between C (the CPU JIT),
// CUDA C (NVRTC) and GLSL compute lives here, so a new target is a new table rather than a new
// emitter (after tinygrad's renderer/cstyle.py).
#include <array>
#include <string>

#include "tessera/lower/loop_ir.h"

namespace tessera::codegen {

// How the range [begin, end) of a kernel is walked.
enum class Schedule {
  RowLoops,    // one caller thread walks a contiguous chunk: rows with a contiguous, vectorisable inner loop
  GridStride,  // many hardware threads: each takes indices begin + thread id, stepping by the thread count
};

struct Dialect {
  std::string name;
  Schedule schedule = Schedule::RowLoops;
  std::string prelude;  // the module's first lines: includes, typedefs
  std::array<std::string, lower::kNumScalarTypes> type_names;
  std::string bool_buffer_type;  // element type of bool buffers (bytes holding 0 or 1)
  std::array<std::array<std::string, 2>, lower::kNumMathFns> math_names;  // [fn][0: f32, 1: f64]
  std::string isnan_fn, isinf_fn;
  std::string true_literal, false_literal;
  std::string f32_suffix;                  // "f"
  std::array<std::string, 2> inf_literal;  // [0: f32, 1: f64], positive infinity
  std::array<std::string, 2> nan_literal;  // quiet NaN
  std::string kernel_qualifier;            // before "void name(...)"
  std::string helper_qualifier;            // before helper functions
  std::string shared_body_qualifier;       // before a body several kernels call (kept out of line)
  std::string restrict_qualifier;          // on buffer pointers ("" for none)
  std::string inner_loop_pragma;           // before contiguous inner loops ("" for none)
  std::string simd_reduction_pragma;       // "{}" receives the reduction clauses ("" for none)
  std::string thread_index;                // GridStride: this thread's offset from begin
  std::string thread_count;                // GridStride: the step
  int reduction_tile = 1024;  // RowLoops: outputs accumulated together when the inner axis is kept (8 KB of doubles)

  const std::string& type(lower::ScalarType t) const { return type_names[static_cast<size_t>(t)]; }
};

const Dialect& c_dialect();     // C11 for the system compiler (gcc/clang)
const Dialect& cuda_dialect();  // CUDA C++ for NVRTC; emitted as text only for now

}  // namespace tessera::codegen
