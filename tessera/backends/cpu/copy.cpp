// Layouts and the strided copy used to materialise views, stage inputs and fill outputs.
#include <algorithm>
#include <array>
#include <cstring>

#include "tessera/backends/cpu/program.h"

namespace tessera::backends::cpu {

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

namespace {

template <class E>
void copy_row(const std::byte* src, int64_t src_step, std::byte* dst, int64_t dst_step, int64_t n) {
  const E* s = reinterpret_cast<const E*>(src);
  E* d = reinterpret_cast<E*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i * dst_step] = s[i * src_step];
}

void copy_inner(const std::byte* src, int64_t src_step, std::byte* dst, int64_t dst_step, int64_t n, size_t size) {
  if (src_step == 1 && dst_step == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * size);
    return;
  }
  switch (size) {
    case 1:
      return copy_row<uint8_t>(src, src_step, dst, dst_step, n);
    case 2:
      return copy_row<uint16_t>(src, src_step, dst, dst_step, n);
    case 4:
      return copy_row<uint32_t>(src, src_step, dst, dst_step, n);
    default:
      return copy_row<uint64_t>(src, src_step, dst, dst_step, n);
  }
}

// Copies outer rows [begin, end) (rows: every axis but the innermost) using `index` as scratch.
void copy_rows(const CopyPlan& p, const std::byte* src, std::byte* dst, int64_t begin, int64_t end, int64_t* index) {
  const size_t outer = p.shape.size() - 1;
  const auto esize = static_cast<int64_t>(p.element_size);
  int64_t rest = begin, so = p.src_offset, dof = p.dst_offset;
  for (size_t d = outer; d-- > 0;) {
    index[d] = rest % p.shape[d];
    rest /= p.shape[d];
    so += index[d] * p.src_strides[d];
    dof += index[d] * p.dst_strides[d];
  }
  const int64_t inner = p.shape.back();
  for (int64_t row = begin; row < end; ++row) {
    copy_inner(src + so * esize, p.src_strides.back(), dst + dof * esize, p.dst_strides.back(), inner, p.element_size);
    for (size_t d = outer; d-- > 0;) {
      so += p.src_strides[d];
      dof += p.dst_strides[d];
      if (++index[d] < p.shape[d]) break;
      so -= p.src_strides[d] * p.shape[d];
      dof -= p.dst_strides[d] * p.shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

void CopyPlan::run(const std::byte* src_base, std::byte* dst_base, runtime::ThreadPool* pool) const {
  if (numel == 0) return;
  const int64_t rows = numel / shape.back();
  auto body = [&](int64_t begin, int64_t end) {
    std::array<int64_t, 16> small{};
    if (shape.size() <= small.size()) {
      copy_rows(*this, src_base, dst_base, begin, end, small.data());
    } else {
      std::vector<int64_t> index(shape.size());
      copy_rows(*this, src_base, dst_base, begin, end, index.data());
    }
  };
  // Split only copies big enough to amortise waking the workers (~64K elements per chunk).
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / shape.back());
  if (pool != nullptr && pool->size() > 1 && rows >= 2 * grain) {
    pool->parallel_for(rows, grain, body);
  } else {
    body(0, rows);
  }
}

}  // namespace tessera::backends::cpu
