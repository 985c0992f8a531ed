#include "tessera/models/llm/stacked_weight.h"

#include <cstring>

#include "tessera/models/llm/llm_blocks.h"
#include "tessera/ops/ops.h"

namespace tessera::models::llm {

namespace {

// The rows of every part, one after another, as a new u8 [sum rows, row_bytes] constant.
QuantWeight concat_rows(const std::vector<const QuantWeight*>& parts) {
  QuantWeight out = *parts.front();
  const int64_t row_bytes = out.blocks.shape()[1];
  out.rows = 0;
  for (const QuantWeight* p : parts) out.rows += p->rows;
  Array bytes = Array::empty(DType::u8, {out.rows, row_bytes});
  auto* dst = bytes.data<uint8_t>();
  for (const QuantWeight* p : parts) {
    const Array& src = p->blocks.array();
    const size_t n = static_cast<size_t>(p->rows * row_bytes);
    std::memcpy(dst, src.contiguous().raw_data(), n);
    dst += n;
  }
  out.blocks = Tensor::from_array(bytes, "stacked");
  return out;
}

}  // namespace

std::vector<StackedWeight> stack_weights(const std::vector<const QuantWeight*>& parts, bool stack) {
  std::vector<StackedWeight> stacks;
  for (size_t i = 0; i < parts.size();) {
    size_t j = i + 1;
    while (stack && j < parts.size() && parts[j]->type == parts[i]->type && parts[j]->cols == parts[i]->cols) ++j;
    const std::vector<const QuantWeight*> run(parts.begin() + static_cast<std::ptrdiff_t>(i),
                                              parts.begin() + static_cast<std::ptrdiff_t>(j));
    StackedWeight s;
    s.weight = run.size() == 1 ? *run.front() : concat_rows(run);
    for (const QuantWeight* p : run) s.rows.push_back(p->rows);
    stacks.push_back(std::move(s));
    i = j;
  }
  return stacks;
}

std::vector<Tensor> linear_parts(const Tensor& x, const std::vector<StackedWeight>& stacks) {
  std::vector<Tensor> out;
  for (const StackedWeight& s : stacks) {
    const Tensor y = linear(x, s.weight);
    if (s.rows.size() == 1) {
      out.push_back(y);
      continue;
    }
    // Slices rather than one split: each is a view that a consumer's generated kernel reads in place
    // (a prefill's [m, ffn] gate and up halves were copied out first, 0.1 ms each on an H200).
    int64_t start = 0;
    for (int64_t rows : s.rows) {
      out.push_back(ops::slice(y, y.rank() - 1, start, start + rows));
      start += rows;
    }
  }
  return out;
}

}  // namespace tessera::models::llm
