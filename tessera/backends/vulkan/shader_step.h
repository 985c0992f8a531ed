#pragma once
// The step of every library shader (softmax, indexing, padding, Adam): one or more dispatches whose
// pipelines, bound bytes, push constants and workgroup counts are all fixed when the graph is lowered.
// A shader that checks its data (an index out of range) binds the run's status word as its last buffer
// and sets bits of it with atomicOr; the executable reads the word after the run and reports it.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/common/lowering.h"
#include "tessera/backends/vulkan/pipelines.h"

namespace tessera::backends::vulkan {

/// Bits of the status word (what went wrong in a run's data).
enum StatusBit : uint32_t {
  kStatusIndexOutOfRange = 1u,  // gather, scatter_add, index_select, embedding, one_hot
  kStatusRepeatedIndex = 2u,    // index_copy: an index repeated (each row may be written once)
  kStatusAdamStep = 4u,         // adam_update's step was not a whole number >= 1
  kStatusPositionOutOfRange = 8u,  // kv_cache_attention: a query's position outside the cache
};
/// What a non-zero status word means, in one sentence.
std::string status_message(uint32_t word);

/// One buffer a library dispatch binds: an operand and the bytes from it the shader may touch.
struct ShaderBinding {
  common::Operand at;
  uint64_t bytes = 0;
  bool written = false;
  uint32_t element_size = 4;  // the unit of the binding's start shift in the shader
};

/// One dispatch: bindings 0..N-1 (the status word at N when `reports_status`), the push words, and
/// where in them the binding shifts go (`shifts_per_word` 4: a byte each).
struct ShaderDispatch {
  std::shared_ptr<const Pipeline> pipeline;
  std::vector<ShaderBinding> bindings;
  std::vector<uint32_t> push;
  int shift_word = 0;
  int shifts_per_word = 1;
  std::array<uint32_t, 3> groups = {1, 1, 1};
  bool reports_status = false;
  // Skipped when bindings 0 and 1 are the same memory in this run: a copy of x into a result that
  // shares x's memory (a KV cache updated in place) has nothing to do.
  bool skip_when_in_place = false;
};

/// A library op's dispatches, recorded in order (the recorder puts barriers between dependent ones).
class ShaderStep final : public common::Step {
 public:
  ShaderStep(std::vector<ShaderDispatch> dispatches, std::string what);
  void run(const common::RunContext& ctx) const override;
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return "vulkan " + what_; }
  /// Whether a dispatch sets the status word.
  bool reports_status() const;

 private:
  std::vector<ShaderDispatch> dispatches_;
  std::string what_;
};

/// Bytes from a layout's buffer start to one past the last element it reaches (strides may be 0 or
/// negative; the offset keeps every element at or after the start).
uint64_t layout_extent_bytes(const common::Layout& layout, size_t element_size);

/// Workgroups for a shader that strides over `units` items, `per_group` a workgroup: at most 65535,
/// which every device allows (the shaders loop over the rest); 0 for no units (no dispatch).
uint32_t library_groups(int64_t units, int64_t per_group = 256);
/// Whether every input and output of the node has fewer than 2^31 elements (shaders index with int).
bool fits_int_indexing(const ir::Node& node);
/// Whether `bytes`, rounded up to whole 32-bit words, fit one binding of the Vulkan device
/// (maxStorageBufferRange); false without a device.
bool fits_one_binding(int64_t bytes);

/// A binding of a value's whole buffer from its start (the shader adds the layout's offset).
ShaderBinding buffer_binding(const common::Lowering& L, int32_t id, bool written, uint32_t element_size);

}  // namespace tessera::backends::vulkan
