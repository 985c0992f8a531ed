// Layouts, copy plans, program dumps and constant binding: the parts of a Program every backend shares.
#include "tessera/backends/common/program.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "tessera/ir/node.h"

namespace tessera::backends::common {

bool Layout::contiguous() const {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) return true;
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

Layout Layout::packed(const Shape& shape, int64_t offset) {
  return Layout{shape, contiguous_strides(shape), offset};
}

CopyPlan CopyPlan::make(const Layout& src, const Layout& dst, size_t element_size) {
  CopyPlan p;
  p.element_size = element_size;
  p.src_offset = src.offset;
  p.dst_offset = dst.offset;
  p.numel = src.numel();
  if (p.numel == 0) return p;
  // Drop size-1 axes, then merge each axis into its inner neighbour when both views step evenly.
  for (size_t d = 0; d < src.shape.size(); ++d) {
    if (src.shape[d] == 1) continue;
    if (!p.shape.empty() && p.src_strides.back() == src.strides[d] * src.shape[d] &&
        p.dst_strides.back() == dst.strides[d] * src.shape[d]) {
      p.shape.back() *= src.shape[d];
      p.src_strides.back() = src.strides[d];
      p.dst_strides.back() = dst.strides[d];
      continue;
    }
    p.shape.push_back(src.shape[d]);
    p.src_strides.push_back(src.strides[d]);
    p.dst_strides.push_back(dst.strides[d]);
  }
  if (p.shape.empty()) {
    p.shape = {1};
    p.src_strides = {1};
    p.dst_strides = {1};
  }
  return p;
}

std::string Program::dump() const {
  std::string out =
      fmt::format("program: {} steps, arena {} bytes, {} buffers\n", steps.size(), arena_bytes, buffers.size());
  for (size_t i = 0; i < steps.size(); ++i) out += fmt::format("  {:3}: {}\n", i, steps[i]->describe());
  return out;
}

bool can_write_over_input(const Program& p, int32_t input, int32_t output) {
  const auto is = [&](int32_t b, BufferKind kind, int32_t slot) {
    const BufferInfo& info = p.buffers[static_cast<size_t>(b)];
    return info.kind == kind && info.slot == slot;
  };
  const auto touches = [](const std::vector<int32_t>& list, const auto& pred) {
    return std::any_of(list.begin(), list.end(), pred);
  };
  const auto is_input = [&](int32_t b) { return is(b, BufferKind::input, input); };
  const auto is_output = [&](int32_t b) { return is(b, BufferKind::output, output); };
  bool written = false;
  for (size_t s = 0; s < p.access.size(); ++s) {
    const runtime::StepAccess& a = p.access[s];
    const bool reads_input = touches(a.reads, is_input), writes_output = touches(a.writes, is_output);
    if (written && reads_input) return false;  // the input is read after the output overwrote it
    if (writes_output && !written) {
      written = true;
      if (!reads_input) continue;
      // The first writer also reads the input: only as a declared in-place pair.
      bool ok = s < p.same_memory_ok.size();
      for (int32_t r : a.reads) {
        if (!ok || !is_input(r)) continue;
        ok = false;
        for (const auto& [w, rd] : p.same_memory_ok[s]) ok = ok || (rd == r && is_output(w));
      }
      if (!ok) return false;
    }
  }
  return true;
}

namespace {

// Derived constants by (source memory, tag), held weakly: an entry lives while some executable binds
// it, and is only reused while the source's storage is the very one it was derived from.
struct DerivedEntry {
  std::weak_ptr<Storage> source;
  std::weak_ptr<Storage> derived;
  std::byte* data = nullptr;
  DType dtype = DType::u8;
  Shape shape;
};

Array shared_derivation(const ConstantSource& c, const Array& source) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, std::string>, DerivedEntry> cache;
  const auto key = std::make_pair(source.raw_data(), c.tag + "/" + std::to_string(source.nbytes()));
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) {
      const auto src = it->second.source.lock();
      auto derived = it->second.derived.lock();
      if (src && derived && src == source.storage()) {
        return Array::from_external(it->second.data, it->second.dtype, it->second.shape,
                                    std::shared_ptr<const void>(derived));
      }
    }
  }
  Array made = c.derive(source);
  if (c.tag.empty() || !made.storage()) return made;
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = cache.begin(); it != cache.end();) {  // forget entries nothing holds any more
    it = it->second.derived.expired() ? cache.erase(it) : std::next(it);
  }
  cache[key] = DerivedEntry{source.storage(), made.storage(), static_cast<std::byte*>(made.raw_data()), made.dtype(),
                            made.shape()};
  return made;
}

}  // namespace

std::vector<Array> bind_constants(const Program& p, const std::vector<const ir::Node*>& graph_constants) {
  std::vector<Array> constants;
  constants.reserve(p.constants.size());
  for (const ConstantSource& c : p.constants) {
    if (c.derived_from >= 0) {  // derived slots come after their sources
      constants.push_back(shared_derivation(c, constants[static_cast<size_t>(c.derived_from)]));
      continue;
    }
    constants.push_back(c.original >= 0
                            ? graph_constants[static_cast<size_t>(c.original)]->attrs().get_tensor("value").contiguous()
                            : c.owned);
  }
  return constants;
}

void resolve_buffers(const Program& p, std::byte* arena, const std::vector<std::byte*>& inputs,
                     const std::vector<std::byte*>& outputs, const std::vector<Array>& constants,
                     std::vector<std::byte*>& addresses) {
  addresses.resize(p.buffers.size());
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const BufferInfo& info = p.buffers[b];
    const auto slot = static_cast<size_t>(info.slot);
    switch (info.kind) {
      case BufferKind::arena:
        addresses[b] = arena + info.arena_offset;
        break;
      case BufferKind::input:
        addresses[b] = inputs[slot];
        break;
      case BufferKind::output:
        addresses[b] = outputs[slot];
        break;
      case BufferKind::constant:
        addresses[b] = static_cast<std::byte*>(constants[slot].device_data());
        break;
    }
  }
}

}  // namespace tessera::backends::common
