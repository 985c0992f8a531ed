// gather and scatter_add (the index ops of cross-entropy and its gradient) and index_copy (a KV cache's
// row writes) as allocation-free steps: gather and index_copy move elements of any dtype by size;
// scatter_add accumulates f32/f64 in place. Indices are
// bounds-checked as they are read, with the reference kernels' error messages.
#include <fmt/format.h>

#include <array>
#include <cstring>

#include "tessera/backends/cpu/library_ops.h"

namespace tessera::backends::cpu {
namespace {

// Walks every position of `shape` (the index tensor's shape) tracking the element offsets of the
// index itself (packed), of a packed operand `a` with the indexed axis's stride zeroed, and of a
// packed operand `b` (both described by their own shapes' strides).
struct IndexWalk {
  Shape shape;
  Strides index_strides, a_strides, b_strides;
  int64_t axis_size = 0, axis_stride = 0;  // of the indexed operand
};

template <class F>
void walk(const IndexWalk& w, F&& f) {
  const int64_t total = shape_numel(w.shape);
  if (total == 0) return;
  const size_t rank = w.shape.size();
  std::array<int64_t, 16> small{};
  std::vector<int64_t> big;
  int64_t* index = small.data();
  if (rank > small.size()) {
    big.assign(rank, 0);
    index = big.data();
  }
  int64_t oi = 0, oa = 0, ob = 0;
  for (int64_t n = 0; n < total; ++n) {
    f(oi, oa, ob);
    for (size_t d = rank; d-- > 0;) {
      oi += w.index_strides[d];
      oa += w.a_strides[d];
      ob += w.b_strides[d];
      if (++index[d] < w.shape[d]) break;
      oi -= w.index_strides[d] * w.shape[d];
      oa -= w.a_strides[d] * w.shape[d];
      ob -= w.b_strides[d] * w.shape[d];
      index[d] = 0;
    }
  }
}

template <class I>
int64_t checked(const I* idx, int64_t at, int64_t axis, const IndexWalk& w, const std::string& op,
                const std::vector<ir::TensorType>& types) {
  const auto i = static_cast<int64_t>(idx[at]);
  if (i < 0 || i >= w.axis_size) {
    ir::op_fail(op, types,
                "index {} is out of range for axis {} of size {} (valid indices are 0..size-1; negative indices are "
                "not supported)",
                i, axis, w.axis_size);
  }
  return i;
}

bool index_dtype_ok(DType dt) {
  return dt == DType::i32 || dt == DType::i64;
}

class GatherStep final : public Step {
 public:
  GatherStep(IndexWalk w, int64_t axis, size_t element_size, bool i64, std::vector<ir::TensorType> types, Operand x,
             Operand index, Operand out)
      : w_(std::move(w)),
        axis_(axis),
        size_(element_size),
        i64_(i64),
        types_(std::move(types)),
        x_(x),
        index_(index),
        out_(out) {}
  void run(const RunContext& ctx) const override {
    if (i64_) return run_typed(ctx, ctx.ptr<const int64_t>(index_));
    run_typed(ctx, ctx.ptr<const int32_t>(index_));
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override { return fmt::format("gather {} axis {}", shape_str(w_.shape), axis_); }

 private:
  template <class I>
  void run_typed(const RunContext& ctx, const I* idx) const {
    const std::byte* x = ctx.ptr<const std::byte>(x_);
    std::byte* out = ctx.ptr<std::byte>(out_);
    const auto esize = static_cast<int64_t>(size_);
    walk(w_, [&](int64_t oi, int64_t ox, int64_t oo) {
      const int64_t i = checked(idx, oi, axis_, w_, "gather", types_);
      std::memcpy(out + oo * esize, x + (ox + i * w_.axis_stride) * esize, size_);
    });
  }
  IndexWalk w_;
  int64_t axis_;
  size_t size_;
  bool i64_;
  std::vector<ir::TensorType> types_;
  Operand x_, index_, out_;
};

template <class T>
class ScatterAddStep final : public Step {
 public:
  ScatterAddStep(IndexWalk w, int64_t axis, int64_t numel, bool i64, std::vector<ir::TensorType> types, Operand x,
                 Operand index, Operand src, Operand out)
      : w_(std::move(w)),
        axis_(axis),
        numel_(numel),
        i64_(i64),
        types_(std::move(types)),
        x_(x),
        index_(index),
        src_(src),
        out_(out) {}
  void run(const RunContext& ctx) const override {
    if (i64_) return run_typed(ctx, ctx.ptr<const int64_t>(index_));
    run_typed(ctx, ctx.ptr<const int32_t>(index_));
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override { return fmt::format("scatter_add {} axis {}", shape_str(w_.shape), axis_); }

 private:
  template <class I>
  void run_typed(const RunContext& ctx, const I* idx) const {
    const T* x = ctx.ptr<const T>(x_);
    const T* src = ctx.ptr<const T>(src_);
    T* out = ctx.ptr<T>(out_);
    // Check every index before writing anything, so that an error leaves no half result.
    walk(w_, [&](int64_t oi, int64_t, int64_t) { checked(idx, oi, axis_, w_, "scatter_add", types_); });
    if (out != x) std::memcpy(out, x, static_cast<size_t>(numel_) * sizeof(T));
    walk(w_, [&](int64_t oi, int64_t os, int64_t oo) {
      out[oo + static_cast<int64_t>(idx[oi]) * w_.axis_stride] += src[os];
    });
  }
  IndexWalk w_;
  int64_t axis_, numel_;
  bool i64_;
  std::vector<ir::TensorType> types_;
  Operand x_, index_, src_, out_;
};

// index_copy: whole slices of src written over x's along one axis, moved by size (any dtype). With the
// result in x's buffer (a KV cache updated in place) only the new slices are written.
class IndexCopyStep final : public Step {
 public:
  IndexCopyStep(int64_t outer, int64_t size, int64_t m, size_t slice_bytes, bool i64, std::vector<ir::TensorType> types,
                Operand x, Operand index, Operand src, Operand out)
      : outer_(outer),
        size_(size),
        m_(m),
        slice_bytes_(slice_bytes),
        i64_(i64),
        types_(std::move(types)),
        x_(x),
        index_(index),
        src_(src),
        out_(out) {}
  void run(const RunContext& ctx) const override {
    if (i64_) return run_typed(ctx, ctx.ptr<const int64_t>(index_));
    run_typed(ctx, ctx.ptr<const int32_t>(index_));
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    return fmt::format("index_copy {} slices of {} bytes into {} x {}", m_, slice_bytes_, outer_, size_);
  }

 private:
  template <class I>
  void run_typed(const RunContext& ctx, const I* idx) const {
    // Every index is checked (in range, none repeated: a quadratic scan of a handful of rows) before
    // anything is written, so that an error leaves no half result.
    for (int64_t i = 0; i < m_; ++i) {
      const auto r = static_cast<int64_t>(idx[i]);
      if (r < 0 || r >= size_) {
        ir::op_fail("index_copy", types_, "index {} is out of range for an axis of size {} (valid indices are 0..size-1)",
                    r, size_);
      }
      for (int64_t j = 0; j < i; ++j) {
        if (static_cast<int64_t>(idx[j]) == r) {
          ir::op_fail("index_copy", types_, "index {} appears twice: each slice may be written once", r);
        }
      }
    }
    const auto* x = ctx.ptr<const std::byte>(x_);
    const auto* src = ctx.ptr<const std::byte>(src_);
    auto* out = ctx.ptr<std::byte>(out_);
    if (out != x) std::memcpy(out, x, static_cast<size_t>(outer_ * size_) * slice_bytes_);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < m_; ++i) {
        std::memcpy(out + static_cast<size_t>(o * size_ + static_cast<int64_t>(idx[i])) * slice_bytes_,
                    src + static_cast<size_t>(o * m_ + i) * slice_bytes_, slice_bytes_);
      }
    }
  }
  int64_t outer_, size_, m_;
  size_t slice_bytes_;
  bool i64_;
  std::vector<ir::TensorType> types_;
  Operand x_, index_, src_, out_;
};

int64_t axis_of(const ir::Node& node) {
  return normalize_axis(node.attrs().get_int("axis"), node.input(0).rank(), node.op_name().c_str());
}

bool claim_gather(const ir::Node& node) {
  return node.input(0).rank() >= 1 && index_dtype_ok(node.input(1).dtype()) && node.input(0).rank() <= 16;
}

bool claim_scatter_add(const ir::Node& node) {
  const DType dt = node.input(0).dtype();
  return (dt == DType::f32 || dt == DType::f64) && node.input(2).dtype() == dt && node.input(0).rank() >= 1 &&
         index_dtype_ok(node.input(1).dtype());
}

std::vector<ir::TensorType> input_types(const ir::Node& node) {
  std::vector<ir::TensorType> t;
  for (const ir::Value& v : node.inputs()) t.push_back(v.type());
  return t;
}

bool lower_gather(Lowering& L, const ir::NodePtr& node) {
  if (!claim_gather(*node)) return false;
  const int64_t axis = axis_of(*node);
  const int32_t x = L.packed(L.value(node->input(0))), index = L.packed(L.value(node->input(1)));
  const int32_t out = L.produce(ir::Value(node, 0));
  IndexWalk w;
  w.shape = node->input(1).shape();
  w.index_strides = contiguous_strides(w.shape);
  w.a_strides = contiguous_strides(node->input(0).shape());
  w.axis_size = node->input(0).shape()[static_cast<size_t>(axis)];
  w.axis_stride = w.a_strides[static_cast<size_t>(axis)];
  w.a_strides[static_cast<size_t>(axis)] = 0;
  w.b_strides = w.index_strides;  // the output has the index's shape
  L.emit(std::make_unique<GatherStep>(std::move(w), axis, dtype_size(node->input(0).dtype()),
                                      node->input(1).dtype() == DType::i64, input_types(*node), L.operand(x),
                                      L.operand(index), L.operand(out)),
         {x, index}, {out});
  return true;
}

bool lower_scatter_add(Lowering& L, const ir::NodePtr& node) {
  if (!claim_scatter_add(*node)) return false;
  const int64_t axis = axis_of(*node);
  const int32_t x = L.packed(L.value(node->input(0))), index = L.packed(L.value(node->input(1)));
  const int32_t src = L.packed(L.value(node->input(2)));
  const int32_t out = L.produce(ir::Value(node, 0));
  L.allow_in_place(out, x, {x, index, src});
  IndexWalk w;
  w.shape = node->input(1).shape();
  w.index_strides = contiguous_strides(w.shape);
  w.a_strides = contiguous_strides(node->input(2).shape());  // src, walked with the index's shape
  w.b_strides = contiguous_strides(node->input(0).shape());  // out, with the indexed axis from the index
  w.axis_size = node->input(0).shape()[static_cast<size_t>(axis)];
  w.axis_stride = w.b_strides[static_cast<size_t>(axis)];
  w.b_strides[static_cast<size_t>(axis)] = 0;
  const bool i64 = node->input(1).dtype() == DType::i64;
  const int64_t numel = node->input(0).type().numel();
  std::unique_ptr<Step> step;
  if (node->input(0).dtype() == DType::f32) {
    step = std::make_unique<ScatterAddStep<float>>(std::move(w), axis, numel, i64, input_types(*node), L.operand(x),
                                                   L.operand(index), L.operand(src), L.operand(out));
  } else {
    step = std::make_unique<ScatterAddStep<double>>(std::move(w), axis, numel, i64, input_types(*node), L.operand(x),
                                                    L.operand(index), L.operand(src), L.operand(out));
  }
  L.emit(std::move(step), {x, index, src}, {out});
  return true;
}

// Slices move by size: src in x's dtype (a convert of another dtype runs on the reference kernel).
bool claim_index_copy(const ir::Node& node) {
  return index_dtype_ok(node.input(1).dtype()) && node.input(2).dtype() == node.input(0).dtype();
}

bool lower_index_copy(Lowering& L, const ir::NodePtr& node) {
  if (!claim_index_copy(*node)) return false;
  const int64_t axis = axis_of(*node);
  const int32_t x = L.packed(L.value(node->input(0))), index = L.packed(L.value(node->input(1)));
  const int32_t src = L.packed(L.value(node->input(2)));
  const int32_t out = L.produce(ir::Value(node, 0));
  L.allow_in_place(out, x, {x, index, src});
  const Shape& shape = node->input(0).shape();
  int64_t outer = 1;
  size_t slice = dtype_size(node->input(0).dtype());
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) slice *= static_cast<size_t>(shape[d]);
  L.emit(std::make_unique<IndexCopyStep>(outer, shape[static_cast<size_t>(axis)], node->input(1).shape()[0], slice,
                                         node->input(1).dtype() == DType::i64, input_types(*node), L.operand(x),
                                         L.operand(index), L.operand(src), L.operand(out)),
         {x, index, src}, {out});
  return true;
}

}  // namespace

void register_index_lowerings(LoweringTable& table) {
  table["index_copy"] = {lower_index_copy, claim_index_copy, true};
  table["gather"] = {lower_gather, claim_gather, true};
  table["scatter_add"] = {lower_scatter_add, claim_scatter_add, true};
}

}  // namespace tessera::backends::cpu
