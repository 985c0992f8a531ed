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

  // Streaming stores (RowLoops elementwise kernels; empty stream_store_fn: never). Outputs much larger
  // than the caches are written without first reading each destination line (write-allocate would
  // move 12 bytes per 8 counted in relu(a*x+b)): the vectorised inner loop fills a block buffer per
  // output that stays in L1, then stream_store_fn(dst, src, bytes) copies it out with non-temporal
  // stores, and stream_fence orders them before the call returns (the pool's join follows).
  std::string stream_helpers;      // definitions of the two, emitted once when some kernel streams
  std::string stream_store_fn;     // "" when the dialect has no streaming path
  std::string stream_fence;        // a statement
  std::string stream_buffer_decl;  // "{type} {name}[{size}]" declaration of an aligned block buffer
  // Elements per block, a multiple of 64 (whole lines in every type). Short blocks keep loads and
  // non-temporal stores interleaved: 1024-float blocks (64 lines in a burst) measured ~20% slower.
  int stream_block = 64;
  int stream_block_bytes = 16384;                // at most this many buffer bytes per kernel (fewer elements per block)
  int64_t stream_inner_min = 64;                 // innermost extents below this write directly (partial lines per row)
  int64_t stream_min_bytes = int64_t{16} << 20;  // smaller kernels write directly: their outputs stay in cache

  const std::string& type(lower::ScalarType t) const { return type_names[static_cast<size_t>(t)]; }
};

const Dialect& c_dialect();     // C11 for the system compiler (gcc/clang)
const Dialect& cuda_dialect();  // CUDA C++ for NVRTC; emitted as text only for now

}  // namespace tessera::codegen
