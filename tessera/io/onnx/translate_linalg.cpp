// MatMul (NumPy matmul semantics, 1-D operands included) and Gemm.
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/linalg.h"
#include "tessera/ops/shape.h"

namespace tessera::io::onnx {

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
}

}  // namespace tessera::io::onnx
