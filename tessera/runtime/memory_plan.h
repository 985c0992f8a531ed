#pragma once
// Static memory planning for compiled executables: liveness of buffers over a fixed schedule of steps,
// then best-fit placement of every buffer in one arena so that buffers alive at the same time never
// overlap. A buffer may take over the memory of an earlier one in place when that one dies at the
// step that defines it (the step must tolerate its output aliasing that input).
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::runtime {

struct BufferRequest {
  int64_t bytes = 0;
  int32_t first = 0;        // the step that writes the buffer first
  int32_t last = 0;         // the last step that reads it (>= first)
  int32_t reuse_from = -1;  // an earlier request whose memory this one may take over in place
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per request, in bytes from the arena's start
  std::vector<bool> in_place;    // per request: it took over reuse_from's memory
  int64_t peak_bytes = 0;        // the arena size
  int64_t requested_bytes = 0;   // sum of the (aligned) request sizes: the size without any reuse
};

// Places every request; sizes are rounded up to `alignment` (a power of two) and offsets are
// multiples of it. Requests of zero bytes get offset 0 and occupy nothing.
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, int64_t alignment = 64);

// Brute-force check of a plan: every pair of requests whose live ranges [first, last] intersect must
// occupy disjoint bytes, except an in-place pair, which may share memory at the one step where the
// first dies and the second is born. Returns an empty string when the plan is sound, else why not.
std::string check_memory_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan,
                              int64_t alignment = 64);

// Liveness over a schedule: each step lists the buffers it writes and reads. A buffer's live range
// runs from the first step that writes it to the last that reads it; `live_out` buffers (the
// schedule's results) stay alive through the end. Buffers nothing writes start at their first read.
struct StepAccess {
  std::vector<int32_t> writes;
  std::vector<int32_t> reads;
};
struct LiveRange {
  int32_t first = -1;  // -1: never touched
  int32_t last = -1;
};
std::vector<LiveRange> compute_liveness(int32_t num_buffers, const std::vector<StepAccess>& steps,
                                        const std::vector<int32_t>& live_out);

}  // namespace tessera::runtime
