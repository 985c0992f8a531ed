// embedding (a row lookup) and its gradient, embedding_grad (rows of the cotangent summed into a
// [V, D] table). They are ops of their own so that a bad index is reported as an embedding error
// naming the index and the table size; each decomposes into index_select / scatter_add.
#include <cstring>

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

void check_indices(const std::string& op, const std::vector<TensorType>& in, const TensorType& indices) {
  if (!is_integral(indices.dtype)) {
    ir::op_fail(op, in, "indices must be integers (i64, i32, ...), got {}", dtype_name(indices.dtype));
  }
}

// The indices as i64, each checked against the table size.
std::vector<int64_t> checked_indices(const std::string& op, const Array& indices, int64_t num_embeddings) {
  std::vector<int64_t> idx = indices.to_i64();
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= num_embeddings) {
      fail("{}: index {} (at flat position {} of indices {}) is out of range for num_embeddings {}", op, idx[i], i,
           shape_str(indices.shape()), num_embeddings);
    }
  }
  return idx;
}

Tensor embedding_grad(const Tensor& g, const Tensor& indices, int64_t num_embeddings) {
  return ir::make_node1("embedding_grad", {g, indices}, Attrs{{"num_embeddings", num_embeddings}});
}
}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  return ir::make_node1("embedding", {weight, indices});
}

void register_nn_embedding_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "embedding",
      .min_inputs = 2,
      .max_inputs = 2,
      .infer = [](const std::vector<TensorType>& in, const Attrs&) -> std::vector<TensorType> {
        if (in[0].rank() != 2) {
          ir::op_fail("embedding", in, "weight must be a [num_embeddings, dim] table, got rank {}", in[0].rank());
        }
        check_indices("embedding", in, in[1]);
        Shape out = in[1].shape;
        out.push_back(in[0].shape[1]);
        return {{in[0].dtype, out}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs&,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const Array table = in[0].contiguous();
        const std::vector<int64_t> idx = checked_indices("embedding", in[1], table.shape()[0]);
        Array o = Array::empty(table.dtype(), out[0].shape);
        const size_t row_bytes = static_cast<size_t>(table.shape()[1]) * dtype_size(table.dtype());
        const auto* src = static_cast<const std::byte*>(table.raw_data());
        auto* dst = static_cast<std::byte*>(o.raw_data());
        for (size_t i = 0; i < idx.size(); ++i) {
          if (row_bytes > 0) std::memcpy(dst + i * row_bytes, src + static_cast<size_t>(idx[i]) * row_bytes, row_bytes);
        }
        return {o};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {embedding_grad(Tensor(c.cotangent()), Tensor(c.input(1)), c.input(0).shape()[0]), Value()};
      },
      .decompose = [](const std::vector<Value>& in, const Attrs&) -> std::vector<Value> {
        const Tensor indices(in[1]);
        Shape out = indices.shape();
        out.push_back(in[0].shape()[1]);
        return {reshape(index_select(Tensor(in[0]), 0, reshape(indices, {indices.numel()})), out)};
      },
  });
  r.add(ir::OpDef{
      .name = "embedding_grad",
      .min_inputs = 2,
      .max_inputs = 2,
      .attrs = {{"num_embeddings", ir::AttrKind::Int}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        check_indices("embedding_grad", in, in[1]);
        if (!is_floating(in[0].dtype)) ir::op_fail("embedding_grad", in, "the cotangent must be floating");
        const int64_t v = a.get_int("num_embeddings");
        if (v < 0) ir::op_fail("embedding_grad", in, "num_embeddings must not be negative, got {}", v);
        if (in[0].rank() != in[1].rank() + 1 ||
            !std::equal(in[1].shape.begin(), in[1].shape.end(), in[0].shape.begin())) {
          ir::op_fail("embedding_grad", in, "the cotangent must have shape indices.shape + [dim]");
        }
        return {{in[0].dtype, {v, in[0].shape.back()}}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs&,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        const int64_t v = out[0].shape[0], d = out[0].shape[1];
        const std::vector<int64_t> idx = checked_indices("embedding_grad", in[1], v);
        // Accumulate in double so repeated indices add up without rounding.
        const std::vector<double> g = in[0].to_f64();
        std::vector<double> acc(static_cast<size_t>(v * d), 0.0);
        for (size_t i = 0; i < idx.size(); ++i) {
          for (int64_t j = 0; j < d; ++j) {
            acc[static_cast<size_t>(idx[i] * d + j)] += g[i * static_cast<size_t>(d) + static_cast<size_t>(j)];
          }
        }
        return {Array::from_vector(acc, out[0].shape).astype(out[0].dtype)};
      },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        return {embedding(Tensor(c.cotangent()), Tensor(c.input(1))), Value()};
      },
      .decompose = [](const std::vector<Value>& in, const Attrs& a) -> std::vector<Value> {
        const Tensor g(in[0]), indices(in[1]);
        const int64_t n = indices.numel(), d = g.shape().back();
        const Tensor rows = broadcast_to(reshape(cast(indices, DType::i64), {n, 1}), {n, d});
        const Tensor table = zeros({a.get_int("num_embeddings"), d}, g.dtype());
        return {scatter_add(table, 0, rows, reshape(g, {n, d}))};
      },
  });
}

}  // namespace tessera::ops
