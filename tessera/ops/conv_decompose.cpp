// conv and its two gradients as im2col + one matrix product. cols [Cin * K, N * P] holds, per input
// channel and kernel tap (row-major, weight.reshape's order), the input each output position reads:
//   conv              W [Cout, Cin * K] @ cols          -> [Cout, N * P] -> [N, Cout, *out] (+ bias)
//   conv_weight_grad  dY [Cout, N * P] @ cols^T        -> [Cout, Cin * K]
//   conv_input_grad   W^T @ dY -> dcols [Cin * K, N * P], summed back onto the input (col2im)
// Stride, padding, dilation and a cropped output (output_size, or a gradient smaller than the natural
// output) are all in the tap indices of conv_unfold. groups > 1 decompose too: the rows of cols are
// channel-major, so [G, Cin/G * K, N * P] is a reshape and the product a matmul batched over groups.
#include "tessera/ops/conv_decompose.h"

#include <numeric>

#include "tessera/ops/conv_unfold.h"
#include "tessera/ops/conv_util.h"
#include "tessera/ops/ops.h"

namespace tessera::ops::conv_detail {

namespace {

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(), int64_t{1}, std::multiplies<>());
}

std::vector<AxisWindow> conv_windows(const Attrs& a, const Shape& in, const Shape& kernel, const Shape& out) {
  std::vector<AxisWindow> w;
  for (size_t i = 0; i < in.size(); ++i) {
    w.push_back(
        {in[i], kernel[i], out[i], a.get_ints("stride")[i], a.get_ints("padding")[i], a.get_ints("dilation")[i]});
  }
  return w;
}

int64_t taps_of(const std::vector<AxisWindow>& w) {
  int64_t k = 1;
  for (const AxisWindow& a : w) k *= a.kernel;
  return k;
}

int64_t outs_of(const std::vector<AxisWindow>& w) {
  int64_t p = 1;
  for (const AxisWindow& a : w) p *= a.out;
  return p;
}

// x [N, C, *in] -> [C * K, N * P].
Tensor im2col(const Tensor& x, const std::vector<AxisWindow>& w) {
  const int64_t r = static_cast<int64_t>(w.size());
  std::vector<int64_t> axes = {1};  // [N, C, K1, O1, ...] -> [C, K1, ..., N, O1, ...]
  for (int64_t d = 0; d < r; ++d) axes.push_back(2 + 2 * d);
  axes.push_back(0);
  for (int64_t d = 0; d < r; ++d) axes.push_back(3 + 2 * d);
  const Tensor t = permute(unfold_all(x, w, 0.0), axes);
  return reshape(t, {x.shape()[1] * taps_of(w), x.shape()[0] * outs_of(w)});
}

// dcols [C * K, N * P] -> [N, C, *in], each tap added onto the input element it read.
Tensor col2im(const Tensor& cols, int64_t n, int64_t c, const std::vector<AxisWindow>& w) {
  const int64_t r = static_cast<int64_t>(w.size());
  Shape split = {c};
  for (const AxisWindow& a : w) split.push_back(a.kernel);
  split.push_back(n);
  for (const AxisWindow& a : w) split.push_back(a.out);
  std::vector<int64_t> axes = {1 + r, 0};  // [C, K1, ..., N, O1, ...] -> [N, C, K1, O1, ...]
  for (int64_t d = 0; d < r; ++d) {
    axes.push_back(1 + d);
    axes.push_back(2 + r + d);
  }
  return fold_all(permute(reshape(cols, split), axes), w);
}

// Matrices with a leading group axis when groups > 1 (a plain GEMM otherwise).
Shape grouped(int64_t groups, int64_t rows, int64_t cols) {
  return groups == 1 ? Shape{rows, cols} : Shape{groups, rows / groups, cols};
}

// g [N, Cout, *out] -> [(G,) Cout / G, N * P].
Tensor grad_rows(const Tensor& g, int64_t groups) {
  std::vector<int64_t> axes(static_cast<size_t>(g.rank()));
  std::iota(axes.begin(), axes.end(), 0);
  std::swap(axes[0], axes[1]);
  return reshape(permute(g, axes), grouped(groups, g.shape()[1], g.shape()[0] * product(g.shape(), 2)));
}

// w [Cout, Cin / G, *kernel] -> [(G,) Cout / G, Cin / G * K].
Tensor weight_rows(const Tensor& w, int64_t groups) {
  return reshape(w, grouped(groups, w.shape()[0], product(w.shape(), 1)));
}

// cols [Cin * K, N * P] -> [(G,) Cin / G * K, N * P].
Tensor grouped_cols(const Tensor& cols, int64_t groups) {
  return reshape(cols, grouped(groups, cols.shape()[0], cols.shape()[1]));
}

Shape spatial_of(const Tensor& t) {
  return Shape(t.shape().begin() + 2, t.shape().end());
}

}  // namespace

std::vector<ir::Value> conv_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor x(in[0]), w(in[1]);
  const Shape xs = spatial_of(x), ks = spatial_of(w);
  Shape out;
  for (size_t i = 0; i < xs.size(); ++i) {
    out.push_back(window_out_size_unchecked(xs[i], ks[i], a.get_ints("stride")[i], a.get_ints("padding")[i],
                                            a.get_ints("dilation")[i]));
  }
  if (a.has("output_size")) out = a.get_ints("output_size");
  const std::vector<AxisWindow> win = conv_windows(a, xs, ks, out);
  const int64_t groups = a.get_int("groups"), cout = w.shape()[0];
  const Tensor y = matmul(weight_rows(w, groups), grouped_cols(im2col(x, win), groups));
  Shape split = {cout, x.shape()[0]};
  split.insert(split.end(), out.begin(), out.end());
  std::vector<int64_t> axes(split.size());
  std::iota(axes.begin(), axes.end(), 0);
  std::swap(axes[0], axes[1]);
  Tensor result = permute(reshape(y, split), axes);
  if (in.size() == 3) {
    Shape b(split.size(), 1);
    b[1] = cout;
    result = result + reshape(Tensor(in[2]), b);
  }
  return {result};
}

std::vector<ir::Value> conv_input_grad_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor g(in[0]), w(in[1]);
  const std::vector<AxisWindow> win = conv_windows(a, a.get_ints("input_size"), spatial_of(w), spatial_of(g));
  const int64_t groups = a.get_int("groups"), cin = w.shape()[1] * groups;
  const Tensor dcols = matmul(transpose(weight_rows(w, groups)), grad_rows(g, groups));
  return {col2im(reshape(dcols, {cin * taps_of(win), g.shape()[0] * outs_of(win)}), g.shape()[0], cin, win)};
}

std::vector<ir::Value> conv_weight_grad_decompose(const DecomposeIn& in, const ir::Attrs& a) {
  const Tensor x(in[0]), g(in[1]);
  const Shape& kernel = a.get_ints("kernel_size");
  const std::vector<AxisWindow> win = conv_windows(a, spatial_of(x), kernel, spatial_of(g));
  const int64_t groups = a.get_int("groups");
  const Tensor dw = matmul(grad_rows(g, groups), transpose(grouped_cols(im2col(x, win), groups)));
  Shape shape = {g.shape()[1], x.shape()[1] / groups};
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  return {reshape(dw, shape)};
}

}  // namespace tessera::ops::conv_detail
