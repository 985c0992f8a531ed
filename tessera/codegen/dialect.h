#pragma once
// A C-family dialect as a table: everything the emitter writes that differs between C (the CPU JIT),
// CUDA C (NVRTC) and GLSL compute lives here, so a new target is a new table rather than a new
// emitter (after tinygrad's renderer/cstyle.py).
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "tessera/lower/loop_ir.h"

namespace tessera::codegen {

// How the range [begin, end) of a kernel is walked.
enum class Schedule {
  RowLoops,    // one caller thread walks a contiguous chunk: rows with a contiguous, vectorisable inner loop
  GridStride,  // many hardware threads: each takes indices begin + thread id, stepping by the thread count
};

struct Dialect;

// One buffer a kernel reads or writes, for the dialect's binding hook.
struct BufferBinding {
  bool output = false;
  size_t index = 0;       // in_[index] or out_[index]; the emitter names the buffer in<index> / out<index>
  int binding = 0;        // a flat slot, inputs first then outputs (GLSL: the descriptor binding)
  std::string elem_type;  // the dialect's element type name
};

struct Dialect {
  std::string name;
  Schedule schedule = Schedule::RowLoops;
  std::string prelude;  // the module's first lines: includes, typedefs
  // What a module needs once some kernel touches a type (includes, extensions, conversion helpers):
  // chunks of text after the prelude, each written once per module however many types ask for it.
  std::array<std::vector<std::string>, lower::kNumScalarTypes> type_requirements;
  bool one_kernel_per_module = false;  // GLSL: a shader module has one entry point

  // The kernel's interface. kernel_signature gives the text before the body's "{" (C:
  // "void name(const void* const* in_, void* const* out_, int64_t begin, int64_t end)"); bind_buffer
  // declares one buffer, as the body's first lines or, with bindings_at_module_scope, before the
  // signature (GLSL's layout(binding = k) buffer blocks).
  std::function<std::string(const Dialect&, const std::string& symbol)> kernel_signature;
  std::function<std::string(const Dialect&, const BufferBinding&)> bind_buffer;
  bool bindings_at_module_scope = false;

  std::array<std::string, lower::kNumScalarTypes> type_names;
  std::string bool_buffer_type;   // element type of bool buffers (bytes holding 0 or 1)
  std::string index_type;         // loop variables and offsets
  int index_bits = 64;            // 32: the emitter refuses kernels whose offsets do not fit
  // Unsigned type the index decomposition divides in when the domain has fewer than 2^31 elements
  // ("": index_type): a GPU's 64-bit division is a long subroutine, and a kernel of many axes
  // divides several times per element.
  std::string narrow_division_type;
  bool functional_casts = false;  // "T(x)" (GLSL) rather than "(T)x"
  bool strict_types = false;      // no implicit conversions: bool values are cast to the bool buffer type on store
  std::string and_op, or_op;      // logical and/or of two bools

  std::array<std::array<std::string, 2>, lower::kNumMathFns> math_names;  // [fn][0: f32, 1: f64]
  // A definition of math_names[fn][w] where the dialect lacks the function ("": built in). An f64
  // helper may call the f32 helper of the same function, which is then written before it.
  std::array<std::array<std::string, 2>, lower::kNumMathFns> math_helpers;
  std::string isnan_fn, isinf_fn;
  std::array<std::string, 2> half_to_f32;  // [0: f16, 1: bf16] conversion function, exact
  std::array<std::string, 2> f32_to_half;  // rounds to nearest even

  // Literals: integers are their decimal digits (with a sign) in int_literal[type]'s "{}".
  std::string true_literal, false_literal;
  std::array<std::string, lower::kNumScalarTypes> int_literal;
  std::string f32_suffix;                  // "f"
  std::string f64_suffix;                  // GLSL: "lf"
  std::array<std::string, 2> inf_literal;  // [0: f32, 1: f64], positive infinity
  std::array<std::string, 2> nan_literal;  // quiet NaN
  // A reduction's "seen a NaN" flag: its declaration and the update with value {v}, both formats.
  std::string nan_flag_decl;    // "{flag}" is the name
  std::string nan_flag_update;  // "{flag}", "{v}"

  std::string kernel_qualifier;       // before "void name(...)"
  std::string helper_qualifier;       // before helper functions
  std::string shared_body_qualifier;  // before a body several kernels call (kept out of line)
  // On buffer pointers ("" for none). Both C-family tables leave it empty: the backend may run an
  // elementwise kernel in place, an output aliasing an input read at the same index.
  std::string restrict_qualifier;
  std::string inner_loop_pragma;      // before contiguous inner loops ("" for none)
  std::string simd_reduction_pragma;  // "{}" receives the reduction clauses ("" for none)
  std::string thread_index;           // GridStride: this thread's offset from begin
  std::string thread_count;           // GridStride: the step

  // GridStride cooperation (warp_size 0: none). A reduction with many elements per output spreads
  // them over a group of threads that combine their partial results: a warp-aligned group of up to
  // warp_size lanes through shuffle_xor, or a whole block through shared memory and a barrier.
  // Launches use block_size threads per block, a multiple of warp_size.
  int warp_size = 0;
  int block_size = 256;
  std::string local_index;  // this thread's index in its block
  std::string block_index;  // the block's index, and the number of blocks
  std::string block_count;
  std::string shuffle_xor;       // "{v}" exchanged with the lane whose index differs by "{m}" (32-bit or wider types)
  std::string barrier;           // a statement
  std::string shared_decl;       // "{type} {name}[{size}]" in block-shared memory
  // Lanes combine through a tree in shared memory, a barrier per level, instead of shuffles (GLSL,
  // whose subgroups have no fixed width). warp_size is then the block, so the loops over outputs step
  // whole blocks and every thread reaches the barriers; the tree's slots are declared at module scope.
  bool lanes_through_shared = false;
  std::string nan_flag_merge = "{a} |= {b};";  // a reduction's NaN flag {a} takes in another, {b}
  std::string nan_flag_type = "int";           // shared slots of NaN flags
  // Splitting one output over several blocks (empty scratch_binding: never). Each block leaves its
  // partial result in a scratch buffer the launcher passes after the outputs; the block that counts
  // last (atomic_increment of a per-output counter, after memory_fence) combines the partials in
  // block order, so the result does not depend on which block finishes first.
  std::string scratch_binding;   // declares `unsigned char* tsr_scratch` from slot "{k}" of the outputs
  std::string atomic_increment;  // "{p}": returns the old value of the unsigned counter at p, adding 1
  std::string memory_fence;      // a statement ordering this thread's writes before later ones, device-wide
  std::string volatile_qualifier;  // for reading other blocks' partials
  // Elementwise kernels move vector_bytes per access where rows allow it (0: scalar accesses): one
  // vector per buffer of vector_type ("{type}", "{n}"), defined once by vector_helpers.
  int vector_bytes = 0;
  int vector_unroll = 1;       // vectors per thread step, loaded together before they are computed
  int scalar_unroll = 1;       // elements per thread of an elementwise kernel without vectors, loaded together
  std::string unroll_pragma;   // before a short loop to unroll ("" for none)
  std::string vector_helpers;
  std::string vector_type;
  std::string address_bits;  // "{p}": a pointer's address as an unsigned integer (alignment checks)
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

// How a GridStride kernel maps its range onto threads; the launcher sizes the grid from it.
struct ThreadMapping {
  int group = 1;   // threads per range unit (a reduction's output): 1, a power of two up to the warp, or the block
  int vector = 1;  // consecutive range units per thread step (elementwise kernels with vector accesses)
  int split = 1;   // blocks per output (group is the block): partial results meet in the launcher's scratch
  int unroll = 1;  // range units per thread of an elementwise kernel without vectors (the grid is range / unroll)
};

const Dialect& c_dialect();     // C11 for the system compiler (gcc/clang)
const Dialect& cuda_dialect();  // CUDA C++ for NVRTC; emitted as text only for now (compile-checked in tests)
// GLSL 450 compute shaders, run by the Vulkan backend (backends/vulkan/loop_kernels).
// Indices are 32-bit ints: 64-bit integers are an optional Vulkan feature (shaderInt64) and storage
// buffers rarely exceed 2^31 elements; the emitter refuses larger kernels. One kernel per module.
const Dialect& glsl_dialect();

}  // namespace tessera::codegen
