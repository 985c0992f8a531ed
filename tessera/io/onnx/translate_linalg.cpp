// MatMul (NumPy matmul semantics, 1-D operands included), Gemm and Det.
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/index.h"
#include "tessera/ops/linalg.h"
#include "tessera/ops/reduce.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

// Determinants of [..., n, n] by Gaussian elimination with partial pivoting, unrolled over the static
// n: each step swaps the largest remaining entry of column k into row k (a permutation
// I - v v^T with v = e_k - e_p, the identity when p = k), flips the sign on a swap, and subtracts
// multiples of row k from the rows below. A zero pivot (a singular matrix) leaves the rows as they
// are, so the product of the diagonal is 0 rather than NaN.
Tensor determinant(const NodeContext& c, const Tensor& x) {
  require_floating(c, x);
  if (x.rank() < 2 || x.shape()[x.rank() - 1] != x.shape()[x.rank() - 2]) {
    c.fail("input must be [..., n, n], got {}", shape_str(x.shape()));
  }
  const int64_t n = x.shape().back();
  const Shape batch_shape(x.shape().begin(), x.shape().end() - 2);
  Tensor a = ops::reshape(x, {-1, n, n});
  const Tensor identity = ops::cast(ops::eye(n), x.dtype());
  Tensor sign = ops::ones({a.shape()[0], 1}, x.dtype());
  for (int64_t k = 0; k < n; ++k) {
    const Tensor column = ops::reshape(ops::slice(ops::slice(a, 2, k, k + 1), 1, k, n), {-1, n - k});
    const Tensor pivot_row = ops::argmax(ops::abs(column), 1) + static_cast<double>(k);
    const Tensor picked = ops::one_hot(pivot_row, n, x.dtype());                       // [B, n]: e_p
    const Tensor v = ops::unsqueeze(ops::slice(identity, 0, k, k + 1) - picked, 2);    // [B, n, 1]
    a = ops::matmul(identity - ops::matmul(v, ops::transpose(v, 1, 2)), a);
    sign = sign * (ops::slice(picked, 1, k, k + 1) * 2.0 - 1.0);
    if (k + 1 == n) break;
    const Tensor row = ops::slice(a, 1, k, k + 1);                                      // [B, 1, n]
    const Tensor pivot = ops::slice(row, 2, k, k + 1);                                   // [B, 1, 1]
    const Tensor below = ops::slice(a, 1, k + 1, n);
    const Tensor zero = ops::eq(pivot, scalar_as(pivot, 0.0));
    const Tensor factor = ops::where(zero, scalar_as(pivot, 0.0), ops::slice(below, 2, k, k + 1) /
                                                                      ops::where(zero, scalar_as(pivot, 1.0), pivot));
    a = ops::concat({ops::slice(a, 1, 0, k + 1), below - factor * row}, 1);
  }
  const Tensor diagonal = ops::sum(a * identity, {2});
  return ops::reshape(ops::prod(diagonal, {1}) * ops::reshape(sign, {-1}), batch_shape);
}

}  // namespace

void add_linalg_translations(TranslationTable& t) {
  t.add("MatMul", {1, 9, 13}, [](NodeContext& c) -> std::vector<Tensor> {
    return {ops::matmul(c.input(0), c.input(1))};
  });
  // Y = alpha * A' B' + beta * C; C broadcasts to [M, N] (version 6 asked for that with `broadcast`,
  // which NumPy broadcasting covers; without it C already has the full shape).
  t.add("Gemm", {1, 6, 7, 9, 11, 13}, 6, [](NodeContext& c) -> std::vector<Tensor> {
    Tensor a = c.input(0), b = c.input(1);
    if (c.version() < 7) c.ignore_attr("broadcast");
    const double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
    if (a.rank() != 2 || b.rank() != 2) c.fail("A and B must be 2-D, got ranks {} and {}", a.rank(), b.rank());
    if (c.attr_int("transA", 0) != 0) a = ops::transpose(a, 0, 1);
    if (c.attr_int("transB", 0) != 0) b = ops::transpose(b, 0, 1);
    Tensor y = ops::matmul(a, b);
    if (alpha != 1.0) y = y * alpha;
    if (c.has_input(2) && beta != 0.0) {
      const Tensor bias = c.input(2);
      y = y + (beta == 1.0 ? bias : bias * beta);
    }
    return {y};
  });
  t.add("Det", {11}, [](NodeContext& c) -> std::vector<Tensor> { return {determinant(c, c.input(0))}; });
}

}  // namespace tessera::io::onnx
