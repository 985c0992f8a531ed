#include "tessera/backends/vulkan/shader_step.h"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/steps.h"
#include "tessera/backends/vulkan/vulkan_backend.h"

namespace tessera::backends::vulkan {

std::string status_message(uint32_t word) {
  std::string s;
  const auto add = [&s](const char* what) { s += (s.empty() ? "" : "; ") + std::string(what); };
  if ((word & kStatusIndexOutOfRange) != 0) {
    add("an index was out of range (gather, scatter_add, index_select, embedding, one_hot or index_copy; valid indices are "
        "0..size-1, negative indices are not supported)");
  }
  if ((word & kStatusRepeatedIndex) != 0) add("index_copy: an index was repeated where each may appear once");
  if ((word & kStatusAdamStep) != 0) add("adam_update: the step must be a whole number >= 1");
  if ((word & kStatusPositionOutOfRange) != 0) {
    add("kv_cache_attention: a query's position was outside the cache (valid positions are 0..rows-1)");
  }
  if ((word & ~(kStatusIndexOutOfRange | kStatusRepeatedIndex | kStatusAdamStep | kStatusPositionOutOfRange)) != 0) {
    add(fmt::format("unknown status bits {:#x}", word).c_str());
  }
  return s;
}

ShaderStep::ShaderStep(std::vector<ShaderDispatch> dispatches, std::string what)
    : dispatches_(std::move(dispatches)), what_(std::move(what)) {}

void ShaderStep::run(const common::RunContext& ctx) const {
  for (const ShaderDispatch& d : dispatches_) {
    if (d.skip_when_in_place && ctx.ptr<const std::byte>(d.bindings[0].at) == ctx.ptr<const std::byte>(d.bindings[1].at)) {
      continue;
    }
    std::vector<BufferUse> buffers;
    buffers.reserve(d.bindings.size() + 1);
    for (const ShaderBinding& b : d.bindings) {
      buffers.push_back({ctx.ptr<const std::byte>(b.at), b.bytes, b.written, b.element_size});
    }
    if (d.reports_status) buffers.push_back({ctx.status, 4, true, 4, /*order_free=*/true});
    recorder_of(ctx).dispatch(*d.pipeline, buffers, d.push, d.shift_word, d.groups[0], d.groups[1], d.groups[2],
                              d.shifts_per_word);
  }
}

bool ShaderStep::reports_status() const {
  return std::any_of(dispatches_.begin(), dispatches_.end(),
                     [](const ShaderDispatch& d) { return d.reports_status; });
}

uint64_t layout_extent_bytes(const common::Layout& layout, size_t element_size) {
  int64_t hi = layout.offset;
  for (size_t a = 0; a < layout.shape.size(); ++a) {
    if (layout.shape[a] == 0) return static_cast<uint64_t>(layout.offset) * element_size;
    hi += std::max<int64_t>(0, (layout.shape[a] - 1) * layout.strides[a]);
  }
  return static_cast<uint64_t>(hi + 1) * element_size;
}

uint32_t library_groups(int64_t units, int64_t per_group) {
  if (units <= 0) return 0;  // nothing to do: the recorder skips the dispatch
  return static_cast<uint32_t>(std::clamp<int64_t>((units + per_group - 1) / per_group, 1, 65535));
}

bool fits_one_binding(int64_t bytes) {
  const Context* ctx = vulkan_context();
  const uint64_t words = (static_cast<uint64_t>(bytes) + 3) / 4 * 4;
  return ctx != nullptr && words <= ctx->properties().limits.maxStorageBufferRange;
}

bool fits_int_indexing(const ir::Node& node) {
  for (const ir::Value& v : node.inputs()) {
    if (v.type().numel() >= INT32_MAX) return false;
  }
  for (const ir::TensorType& t : node.output_types()) {
    if (t.numel() >= INT32_MAX) return false;
  }
  return true;
}

ShaderBinding buffer_binding(const common::Lowering& L, int32_t id, bool written, uint32_t element_size) {
  const common::ValueInfo& v = L.info(id);
  return {common::Operand{v.buffer, 0}, layout_extent_bytes(v.layout, dtype_size(v.dtype)), written, element_size};
}

}  // namespace tessera::backends::vulkan
