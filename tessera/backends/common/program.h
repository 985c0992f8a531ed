#pragma once
// The compiled form of a graph, on any backend: a schedule of steps over numbered buffers. A buffer
// is a region of the arena, or one of the run's inputs, outputs or bound constants; a step reads and
// writes buffers through Operands (buffer + byte offset) resolved per run into addresses, so one
// Program serves every Executable made from graphs of the same structure. The addresses are wherever
// the backend keeps its memory (host memory on the CPU, device memory on a GPU): nothing here reads
// them; only the backend's steps do.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/runtime/memory_plan.h"

namespace tessera::runtime {
class ThreadPool;
}
namespace tessera::ir {
class Node;
}

namespace tessera::backends::common {

enum class BufferKind : uint8_t { arena, input, output, constant };

struct BufferInfo {
  BufferKind kind = BufferKind::arena;
  int32_t slot = 0;          // input, output or constant index (unused for the arena)
  int64_t bytes = 0;         // size (for arena buffers: what the planner places)
  int64_t arena_offset = 0;  // set by the memory planner
  int32_t reuse_from = -1;   // arena buffer whose memory this one may take over in place
};

struct Operand {
  int32_t buffer = -1;
  int64_t byte_offset = 0;
};

// A strided view of a buffer, in elements (strides may be 0 for broadcasts or negative for flips).
struct Layout {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
  int64_t numel() const { return shape_numel(shape); }
  bool contiguous() const;  // packed row-major (size-1 axes may have any stride)
  static Layout packed(const Shape& shape, int64_t offset = 0);
};

struct RunContext {
  std::byte* const* buffers = nullptr;  // per buffer id, its address in this run
  runtime::ThreadPool* pool = nullptr;  // the host thread pool (may be null on a GPU backend)
  // The device stream the steps are ordered on: cudaStream_t on CUDA, null on the host.
  void* stream = nullptr;
  // A device word that kernels set when the data is invalid (CUDA: an index out of range), which the
  // executable reports; null on the host, where such errors throw at once.
  void* status = nullptr;
  const void** kernel_inputs = nullptr;  // scratch for loop-kernel argument lists
  void** kernel_outputs = nullptr;
  std::byte* step_scratch = nullptr;  // Program::step_scratch_bytes of per-run scratch for any step
  template <class T>
  T* ptr(const Operand& o) const {
    return reinterpret_cast<T*>(buffers[o.buffer] + o.byte_offset);
  }
};

// What a step is, for statistics and dumps.
enum class StepKind : uint8_t { library, kernel, fallback, copy };

class Step {
 public:
  virtual ~Step() = default;
  virtual void run(const RunContext& ctx) const = 0;
  virtual StepKind kind() const = 0;
  virtual std::string describe() const = 0;  // e.g. "sgemm 64x1024x784 +bias relu"
};

// Where the data of constant slot j comes from when an Executable binds a graph's constants: the
// original graph's constant number `original` (in topological order), else `owned` (a constant the
// passes created), else slot `derived_from` passed through `derive` (a constant re-laid for a kernel,
// such as quantized weights in the x8 layout), once per executable.
struct ConstantSource {
  int32_t original = -1;
  Array owned;
  int32_t derived_from = -1;
  std::function<Array(const Array&)> derive;
  std::string tag;  // what `derive` makes ("x8"): with the source's memory, the key of shared derivations
};

struct ProgramStats {
  int library_steps = 0, kernel_steps = 0, fallback_steps = 0, copy_steps = 0, views = 0;
  int in_place = 0;
  std::vector<std::string> fallback_ops;  // op names that ran on the reference kernels
  bool jit_used = false;
  double lower_ms = 0, cluster_ms = 0, jit_ms = 0, passes_ms = 0;
};

struct Program {
  std::vector<BufferInfo> buffers;
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<ConstantSource> constants;
  int64_t arena_bytes = 0;
  int32_t num_inputs = 0, num_outputs = 0;
  int32_t max_kernel_args = 0;
  int64_t step_scratch_bytes = 0;
  // The steps hold the values of some of the graph's constants, not only their slots: generated kernels
  // fold numel-1 constants into literals (lower::is_literal_constant). A plan cache keyed by structure
  // may then reuse the program only for a graph whose small constants match (PlanCache's
  // value_dependent).
  bool holds_constant_values = false;
  ProgramStats stats;
  // The lowering decided something from a constant's value (Epilogue::reads_constant_values): the plan
  // cache may reuse this program only for graphs with the same small constants.
  bool reads_constant_values = false;
  // Per step: the buffers it reads and writes, and the (written, read) pairs of buffers it may be given
  // as one memory (Lowering::allow_in_place) — what decides whether an aliased output may be written
  // straight over its input (can_write_over_input).
  std::vector<runtime::StepAccess> access;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> same_memory_ok;
  // The arena requests and their placement, kept for inspection and tests.
  std::vector<runtime::BufferRequest> arena_requests;
  runtime::MemoryPlan memory;
  std::string dump() const;  // one line per step
};

// An element-size-generic strided copy (no dtype conversion) between two views of one shape, with
// its axes merged and ordered once at compile time. Pure data: each backend's copy step carries it
// out (the CPU's: backends/cpu/copy.h).
struct CopyPlan {
  std::vector<int64_t> shape, src_strides, dst_strides;  // merged axes, innermost last, in elements
  int64_t src_offset = 0, dst_offset = 0, numel = 0;
  size_t element_size = 1;
  static CopyPlan make(const Layout& src, const Layout& dst, size_t element_size);
};

// The address of every buffer of `p` for one run: arena buffers at their offsets in `arena`, the rest
// from the run's input and output addresses and the bound constants (on the executable's device).
void resolve_buffers(const Program& p, std::byte* arena, const std::vector<std::byte*>& inputs,
                     const std::vector<std::byte*>& outputs, const std::vector<Array>& constants,
                     std::vector<std::byte*>& addresses);

// Whether graph output `output` may be written straight into the memory of graph input `input` (a
// declared alias such as a KV cache) instead of being staged and copied back: every step that reads the
// input runs before the first step that writes the output, or is that step and accepts the two as one
// memory.
bool can_write_over_input(const Program& p, int32_t input, int32_t output);

// The arrays an executable binds to `p`'s constant slots: `graph_constants` are the constant nodes
// of the graph it is made from, in topological order (GraphKey::constants, plan_cache.h). Derived
// constants are computed here and shared process-wide while any executable holds them: the decode and
// prefill graphs of one model bind the same repacked weights, not a copy each.
std::vector<Array> bind_constants(const Program& p, const std::vector<const ir::Node*>& graph_constants);

}  // namespace tessera::backends::common
