// The host execution of a CopyPlan: the strided copy used to materialise views, stage inputs and fill
// outputs.
#include "tessera/backends/cpu/copy.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "tessera/runtime/thread_pool.h"

namespace tessera::backends::cpu {

using common::CopyPlan;

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

void run_copy(const CopyPlan& plan, const std::byte* src_base, std::byte* dst_base, runtime::ThreadPool* pool) {
  if (plan.numel == 0) return;
  const std::vector<int64_t>& shape = plan.shape;
  const int64_t rows = plan.numel / shape.back();
  auto body = [&](int64_t begin, int64_t end) {
    std::array<int64_t, 16> small{};
    if (shape.size() <= small.size()) {
      copy_rows(plan, src_base, dst_base, begin, end, small.data());
    } else {
      std::vector<int64_t> index(shape.size());
      copy_rows(plan, src_base, dst_base, begin, end, index.data());
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
