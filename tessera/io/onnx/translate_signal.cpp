// DFT (opset 17) as two products with constant cosine and sine matrices along the signal axis: the
// signal length is static, so the O(n^2) matrices are built at import and the transform is a matmul,
// which every backend runs fast for the lengths models use.
#include <cmath>
#include <numbers>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/linalg.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

// cos or sin of 2 pi j k / length for j < length (rows: input positions) and k < bins (columns).
Tensor twiddles(int64_t length, int64_t bins, bool sine, DType dtype) {
  std::vector<double> m(static_cast<size_t>(length * bins));
  for (int64_t j = 0; j < length; ++j) {
    for (int64_t k = 0; k < bins; ++k) {
      // j * k reduced mod length keeps the angle small, so large lengths lose no accuracy.
      const double angle = 2.0 * std::numbers::pi * static_cast<double>((j * k) % length) / static_cast<double>(length);
      m[static_cast<size_t>(j * bins + k)] = sine ? std::sin(angle) : std::cos(angle);
    }
  }
  return ops::cast(Tensor::from_vector<double>(m, {length, bins}), dtype);
}

// x (the signal axis last) times the matrix, then the axis moved back to `axis`.
Tensor along(const Tensor& x_last, const Tensor& matrix, const std::vector<int64_t>& back) {
  return ops::permute(ops::matmul(x_last, matrix), back);
}

std::vector<Tensor> dft(NodeContext& c) {
  const Tensor x = c.input(0);
  require_floating(c, x);
  const int64_t rank = x.rank();
  if (rank < 2 || (x.shape().back() != 1 && x.shape().back() != 2)) {
    c.fail("input must be [batch, signal..., 1 or 2] (real or complex), got {}", shape_str(x.shape()));
  }
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 1), rank);
  if (axis == rank - 1) c.fail("axis {} is the real/imaginary axis; expected a signal axis", axis);
  const bool inverse = c.attr_int("inverse", 0) != 0, onesided = c.attr_int("onesided", 0) != 0;
  if (inverse && onesided) c.fail("onesided = 1 with inverse = 1 is not supported (a one-sided inverse)");
  int64_t length = x.shape()[static_cast<size_t>(axis)];
  if (c.has_input(1)) {
    const Array value = c.constant_input(1, "dft_length");
    if (value.numel() != 1) c.fail("dft_length must be a scalar, got {} values", value.numel());
    length = value.astype(DType::i64).contiguous().data<int64_t>()[0];
    if (length < 1) c.fail("dft_length is {}, expected at least 1", length);
  }
  const bool complex = x.shape().back() == 2;
  if (onesided && complex) c.fail("onesided = 1 needs a real input (last dimension 1), got a complex one");
  const int64_t bins = onesided ? length / 2 + 1 : length;

  // Real and imaginary parts without the last axis, padded or cut to `length`, the signal axis last.
  std::vector<int64_t> to_last, back(static_cast<size_t>(rank - 1));
  for (int64_t i = 0; i < rank - 1; ++i) if (i != axis) to_last.push_back(i);
  to_last.push_back(axis);
  for (size_t i = 0; i < to_last.size(); ++i) back[static_cast<size_t>(to_last[i])] = static_cast<int64_t>(i);
  auto part = [&](int64_t index) {
    Tensor p = ops::squeeze(ops::slice(x, rank - 1, index, index + 1), {rank - 1});
    const int64_t n = p.shape()[static_cast<size_t>(axis)];
    if (length < n) p = ops::slice(p, axis, 0, length);
    if (length > n) {
      std::vector<std::pair<int64_t, int64_t>> widths(static_cast<size_t>(rank - 1), {0, 0});
      widths[static_cast<size_t>(axis)] = {0, length - n};
      p = ops::pad(p, widths);
    }
    return ops::permute(p, to_last);
  };
  const Tensor cosine = twiddles(length, bins, false, x.dtype()), sine = twiddles(length, bins, true, x.dtype());
  const Tensor re = part(0);
  // Forward: X_k = sum_j x_j e^{-2 pi i jk/L}; inverse: the conjugate kernel, divided by L.
  Tensor out_re = along(re, cosine, back), out_im = along(re, sine, back) * (inverse ? 1.0 : -1.0);
  if (complex) {
    const Tensor im = part(1);
    out_re = out_re + along(im, sine, back) * (inverse ? -1.0 : 1.0);
    out_im = out_im + along(im, cosine, back);
  }
  if (inverse) {
    out_re = out_re / static_cast<double>(length);
    out_im = out_im / static_cast<double>(length);
  }
  return {ops::stack({out_re, out_im}, rank - 1)};
}

}  // namespace

void add_signal_translations(TranslationTable& t) { t.add("DFT", {17}, dft); }

}  // namespace tessera::io::onnx
