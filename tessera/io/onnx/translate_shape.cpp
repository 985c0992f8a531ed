// Shape ops. Their shape arguments (Reshape's shape, Expand's shape, axes inputs of version 13) must be
// known at import time: Tessera's graphs have static shapes.
#include <numeric>

#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/shape.h"

namespace tessera::io::onnx {

namespace {

std::vector<Tensor> reshape(NodeContext& c) {
  const Tensor x = c.input(0);
  const std::vector<int64_t> requested = c.constant_ints(1, "shape");
  const bool allow_zero = c.attr_int("allowzero", 0) != 0;
  Shape shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == 0 && !allow_zero) {
      if (i >= x.shape().size()) c.fail("shape[{}] is 0 (copy), but the input has rank {}", i, x.rank());
      d = x.shape()[i];
    }
    if (d == -1) {
      if (infer >= 0) c.fail("shape has more than one -1");
      infer = static_cast<int>(i);
    } else if (d < 0) {
      c.fail("shape[{}] is {}", i, d);
    } else {
      known *= d;
    }
    shape.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0) c.fail("cannot infer the -1 of shape for {} elements", x.numel());
    shape[static_cast<size_t>(infer)] = x.numel() / known;
  }
  return {ops::reshape(x, shape)};
}

std::vector<Tensor> flatten(NodeContext& c) {
  const Tensor x = c.input(0);
  return {flatten_at(c, x, c.attr_int("axis", 1))};
}

// Squeeze / Unsqueeze take their axes as an attribute before version 13 and as an input from it.
std::optional<std::vector<int64_t>> axes_argument(NodeContext& c, size_t input) {
  if (c.version() >= 13) {
    if (!c.has_input(input)) return std::nullopt;
    return c.constant_ints(input, "axes");
  }
  return c.optional_ints("axes");
}

std::vector<Tensor> squeeze(NodeContext& c) {
  const Tensor x = c.input(0);
  const auto axes = axes_argument(c, 1);
  if (!axes) return {ops::squeeze(x)};
  const std::vector<int64_t> norm = normalize_axes(c, *axes, x.rank());
  for (int64_t a : norm) {
    if (x.shape()[static_cast<size_t>(a)] != 1) c.fail("axis {} has size {}, expected 1", a, x.shape()[a]);
  }
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (std::find(norm.begin(), norm.end(), i) == norm.end()) out.push_back(x.shape()[static_cast<size_t>(i)]);
  }
  return {ops::reshape(x, out)};
}

std::vector<Tensor> unsqueeze(NodeContext& c) {
  const Tensor x = c.input(0);
  const auto axes = axes_argument(c, 1);
  if (!axes) c.fail("axes are required");
  const int64_t rank = x.rank() + static_cast<int64_t>(axes->size());
  const std::vector<int64_t> norm = normalize_axes(c, *axes, rank);
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(norm.begin(), norm.end(), i) != norm.end()) out.push_back(1);
    else out.push_back(x.shape()[next++]);
  }
  return {ops::reshape(x, out)};
}

std::vector<Tensor> transpose(NodeContext& c) {
  const Tensor x = c.input(0);
  std::vector<int64_t> reversed(static_cast<size_t>(x.rank()));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  const std::vector<int64_t> perm = c.attr_ints("perm", reversed);
  if (static_cast<int64_t>(perm.size()) != x.rank()) c.fail("perm has {} entries for rank {}", perm.size(), x.rank());
  return {ops::permute(x, normalize_axes(c, perm, x.rank(), "perm"))};
}

// Expand broadcasts both ways: the result has the broadcast of the input's shape and `shape`.
std::vector<Tensor> expand(NodeContext& c) {
  const Tensor x = c.input(0);
  const std::vector<int64_t> wanted = c.constant_ints(1, "shape");
  const size_t rank = std::max(wanted.size(), x.shape().size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i + x.shape().size() >= rank ? x.shape()[i + x.shape().size() - rank] : 1;
    const int64_t b = i + wanted.size() >= rank ? wanted[i + wanted.size() - rank] : 1;
    if (a != b && a != 1 && b != 1) c.fail("shape {} does not broadcast with the input's", b);
    out[i] = a == 1 ? b : a;
  }
  return {ops::broadcast_to(x, out)};
}

std::vector<Tensor> tile(NodeContext& c) {
  const Tensor x = c.input(0);
  const std::vector<int64_t> repeats = c.constant_ints(1, "repeats");
  if (static_cast<int64_t>(repeats.size()) != x.rank()) {
    c.fail("repeats has {} entries for rank {}", repeats.size(), x.rank());
  }
  for (int64_t r : repeats) {
    if (r < 0) c.fail("repeats has a negative entry {}", r);
  }
  return {ops::repeat(x, repeats)};
}

// DepthToSpace (DCR: depth, column, row; CRD: column, row, depth) and its inverse SpaceToDepth.
std::vector<Tensor> depth_to_space(NodeContext& c) {
  const Tensor x = c.input(0);
  const int64_t b = c.required_int("blocksize");
  const std::string mode = c.version() >= 11 ? c.attr_string("mode", "DCR") : "DCR";
  if (x.rank() != 4) c.fail("input has rank {}, expected 4", x.rank());
  if (b < 1 || x.dim(1) % (b * b) != 0) c.fail("blocksize {} does not divide the {} channels", b, x.dim(1));
  const int64_t n = x.dim(0), ch = x.dim(1) / (b * b), h = x.dim(2), w = x.dim(3);
  Tensor y;
  if (mode == "DCR") {
    y = ops::permute(ops::reshape(x, {n, b, b, ch, h, w}), {0, 3, 4, 1, 5, 2});
  } else if (mode == "CRD") {
    y = ops::permute(ops::reshape(x, {n, ch, b, b, h, w}), {0, 1, 4, 2, 5, 3});
  } else {
    c.fail("mode {} is not DCR or CRD", mode);
  }
  return {ops::reshape(y, {n, ch, h * b, w * b})};
}

std::vector<Tensor> space_to_depth(NodeContext& c) {
  const Tensor x = c.input(0);
  const int64_t b = c.required_int("blocksize");
  if (x.rank() != 4) c.fail("input has rank {}, expected 4", x.rank());
  if (b < 1 || x.dim(2) % b != 0 || x.dim(3) % b != 0) c.fail("blocksize {} does not divide the spatial size", b);
  const int64_t n = x.dim(0), ch = x.dim(1), h = x.dim(2) / b, w = x.dim(3) / b;
  const Tensor y = ops::permute(ops::reshape(x, {n, ch, h, b, w, b}), {0, 3, 5, 1, 2, 4});
  return {ops::reshape(y, {n, ch * b * b, h, w})};
}

std::vector<Tensor> trilu(NodeContext& c) {
  const Tensor x = c.input(0);
  const int64_t k = c.has_input(1) ? c.constant_ints(1, "k").at(0) : 0;
  if (x.rank() < 2) c.fail("input has rank {}, expected at least 2", x.rank());
  return {c.attr_int("upper", 1) != 0 ? ops::triu(x, k) : ops::tril(x, k)};
}

}  // namespace

void add_shape_translations(TranslationTable& t) {
  t.add("Reshape", {1, 5, 13, 14}, 5, reshape);
  t.add("Flatten", {1, 9, 11, 13}, flatten);
  t.add("Squeeze", {1, 11, 13}, squeeze);
  t.add("Unsqueeze", {1, 11, 13}, unsqueeze);
  t.add("Transpose", {1, 13}, transpose);
  t.add("Expand", {8, 13}, expand);
  t.add("Tile", {1, 6, 13}, 6, tile);
  t.add("DepthToSpace", {1, 11, 13}, depth_to_space);
  t.add("SpaceToDepth", {1, 13}, space_to_depth);
  t.add("Trilu", {14}, trilu);
}

}  // namespace tessera::io::onnx
