// matmul with NumPy semantics: 1-D operands are promoted to matrices (a row vector on the left, a column
// vector on the right) and the added axis is dropped from the result; leading batch axes broadcast;
// operand dtypes promote. The reference kernel multiplies contiguous copies in i-k-j order, so the
// innermost loop runs along contiguous rows of b and of the output and vectorises.
#include "tessera/ops/linalg.h"

#include <cstring>

#include "tessera/core/strided.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;
using ir::VjpContext;

// The operands as matrices (1-D promoted) and the broadcast batch shape, all checked.
struct MatmulDims {
  Shape a_batch, b_batch, batch;
  int64_t m = 0, k = 0, n = 0;
  bool a_vector = false, b_vector = false;
  Shape a_matrix_shape() const { return concat_shape(a_batch, {m, k}); }
  Shape b_matrix_shape() const { return concat_shape(b_batch, {k, n}); }
  Shape out_matrix_shape() const { return concat_shape(batch, {m, n}); }
  Shape out_shape() const {
    Shape s = batch;
    if (!a_vector) s.push_back(m);
    if (!b_vector) s.push_back(n);
    return s;
  }
  static Shape concat_shape(Shape head, const Shape& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  }
};

MatmulDims matmul_dims(const std::vector<TensorType>& in) {
  const Shape& as = in[0].shape;
  const Shape& bs = in[1].shape;
  if (as.empty() || bs.empty()) {
    ir::op_fail("matmul", in, "both operands need at least one dimension, got shapes {} and {} (use mul for scalars)",
                shape_str(as), shape_str(bs));
  }
  MatmulDims d;
  d.a_vector = as.size() == 1;
  d.b_vector = bs.size() == 1;
  d.a_batch = d.a_vector ? Shape{} : Shape(as.begin(), as.end() - 2);
  d.b_batch = d.b_vector ? Shape{} : Shape(bs.begin(), bs.end() - 2);
  d.m = d.a_vector ? 1 : as[as.size() - 2];
  d.k = as.back();
  const int64_t b_rows = d.b_vector ? bs[0] : bs[bs.size() - 2];
  d.n = d.b_vector ? 1 : bs.back();
  if (d.k != b_rows) {
    ir::op_fail("matmul", in, "inner dimensions differ: {} has {} columns but {} has {} rows", shape_str(as), d.k,
                shape_str(bs), b_rows);
  }
  try {
    d.batch = broadcast_shapes(d.a_batch, d.b_batch, "matmul");
  } catch (const Error&) {
    ir::op_fail("matmul", in, "batch dimensions {} of {} and {} of {} do not broadcast", shape_str(d.a_batch),
                shape_str(as), shape_str(d.b_batch), shape_str(bs));
  }
  return d;
}

DType matmul_dtype(const std::vector<TensorType>& in) {
  if (in[0].dtype == DType::boolean || in[1].dtype == DType::boolean) {
    ir::op_fail("matmul", in, "expected numeric dtypes, got {} and {}; cast bool operands first",
                dtype_name(in[0].dtype), dtype_name(in[1].dtype));
  }
  return promote_types(in[0].dtype, in[1].dtype);
}

// Batched product of contiguous operands of element type E (double for floating dtypes, int64 for
// integers). `a` and `b` are viewed with their batch axes broadcast to d.batch; each of their matrices
// is contiguous, so the innermost loop runs over contiguous rows of b and of the output.
template <class E>
Array batched_product(const Array& a, const Array& b, const MatmulDims& d) {
  const Array av = a.broadcast_to(MatmulDims::concat_shape(d.batch, {d.m, d.k}));
  const Array bv = b.broadcast_to(MatmulDims::concat_shape(d.batch, {d.k, d.n}));
  Array out = Array::zeros(dtype_of<E>(), d.out_matrix_shape());
  const E* pa = av.data<const E>();
  const E* pb = bv.data<const E>();
  E* po = out.data<E>();
  const Strides a_batch_strides(av.strides().begin(), av.strides().end() - 2);
  const Strides b_batch_strides(bv.strides().begin(), bv.strides().end() - 2);
  const Strides out_batch_strides = contiguous_strides(d.batch);
  const int64_t m = d.m, k = d.k, n = d.n, out_matrix = m * n;
  for_each_offset<3>(d.batch, {&a_batch_strides, &b_batch_strides, &out_batch_strides}, {0, 0, 0},
                     [&](const std::array<int64_t, 3>& off) {
                       const E* ma = pa + off[0];
                       const E* mb = pb + off[1];
                       E* mo = po + off[2] * out_matrix;
                       for (int64_t i = 0; i < m; ++i) {
                         E* row = mo + i * n;
                         for (int64_t p = 0; p < k; ++p) {
                           const E aip = ma[i * k + p];
                           const E* brow = mb + p * n;
                           if constexpr (std::is_floating_point_v<E>) {
                             for (int64_t j = 0; j < n; ++j) row[j] += aip * brow[j];
                           } else {
                             // Unsigned arithmetic wraps on overflow (as NumPy's integers do) instead
                             // of being undefined behaviour.
                             const auto ua = static_cast<uint64_t>(aip);
                             for (int64_t j = 0; j < n; ++j) {
                               row[j] =
                                   static_cast<E>(static_cast<uint64_t>(row[j]) + ua * static_cast<uint64_t>(brow[j]));
                             }
                           }
                         }
                       }
                     });
  return out;
}

Array matmul_reference(const std::vector<Array>& in, const TensorType& out_type) {
  const MatmulDims d = matmul_dims({{in[0].dtype(), in[0].shape()}, {in[1].dtype(), in[1].shape()}});
  // Floating products accumulate in double whatever the operand precision; integers in 64 bits.
  // astype makes fresh contiguous copies, so the reshapes below are free views.
  const DType acc_dtype = is_floating(out_type.dtype) ? DType::f64 : DType::i64;
  const Array a = in[0].astype(acc_dtype).reshape(d.a_matrix_shape());
  const Array b = in[1].astype(acc_dtype).reshape(d.b_matrix_shape());
  const Array acc = acc_dtype == DType::f64 ? batched_product<double>(a, b, d) : batched_product<int64_t>(a, b, d);
  return acc.astype(out_type.dtype).reshape(out_type.shape);
}

// The cotangent of one operand: undo the batch broadcast (sum), then the 1-D promotion (reshape), and
// return to the operand's own dtype (the product may have promoted it).
Value operand_cotangent(const Tensor& full, const Shape& matrix_shape, const Value& operand) {
  if (!is_floating(operand.dtype())) return Value();
  return cast(reshape(sum_to_shape(full, matrix_shape), operand.shape()), operand.dtype());
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  return ir::make_node1("matmul", {a, b});
}

void register_linalg_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "matmul",
      .min_inputs = 2,
      .max_inputs = 2,
      .infer = [](const std::vector<TensorType>& in, const Attrs&) -> std::vector<TensorType> {
        const DType dt = matmul_dtype(in);
        return {{dt, matmul_dims(in).out_shape()}};
      },
      .reference = [](const std::vector<Array>& in, const Attrs&, const std::vector<TensorType>& out)
          -> std::vector<Array> { return {matmul_reference(in, out[0])}; },
      .vjp = [](const VjpContext& c) -> std::vector<Value> {
        const MatmulDims d = matmul_dims({c.input(0).type(), c.input(1).type()});
        // Work on the promoted matrices: g is batch x m x n, a is a_batch x m x k, b is b_batch x k x n.
        const Tensor g = reshape(Tensor(c.cotangent()), d.out_matrix_shape());
        const Tensor a = reshape(Tensor(c.input(0)), d.a_matrix_shape());
        const Tensor b = reshape(Tensor(c.input(1)), d.b_matrix_shape());
        return {operand_cotangent(matmul(g, transpose(b, -2, -1)), d.a_matrix_shape(), c.input(0)),
                operand_cotangent(matmul(transpose(a, -2, -1), g), d.b_matrix_shape(), c.input(1))};
      },
  });
}

}  // namespace tessera::ops
