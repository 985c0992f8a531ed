// Composites with no op of their own: repeat (broadcast + reshape) and tril/triu (a mask built from
// arange comparisons). Their gradients come from the ops they are made of.
#include "tessera/ops/ops.h"

namespace tessera::ops {

namespace {

Tensor triangle(const Tensor& x, int64_t k, bool lower, const char* name) {
  TESSERA_CHECK(x.rank() >= 2, "{}: expected a tensor of rank >= 2, got {}", name, ir::type_str(x.type()));
  const int64_t n = x.shape()[static_cast<size_t>(x.rank() - 2)];
  const int64_t m = x.shape()[static_cast<size_t>(x.rank() - 1)];
  const Tensor rows = reshape(arange(n, DType::i64), {n, 1});
  const Tensor cols = reshape(arange(m, DType::i64), {1, m});
  const Tensor offset = Tensor::from_vector<int64_t>({k}, {});
  // Element (i, j) lies on diagonal j - i; tril keeps diagonals <= k, triu those >= k.
  const Tensor diagonal = cols - rows;
  const Tensor keep = lower ? le(diagonal, offset) : ge(diagonal, offset);
  return where(keep, x, zeros_like(x));
}

}  // namespace

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  const size_t rank = static_cast<size_t>(x.rank());
  TESSERA_CHECK(repeats.size() >= rank, "repeat: {} repeat counts {} given for {}; expected at least one per axis",
                repeats.size(), shape_str(repeats), ir::type_str(x.type()));
  // x (with leading 1s up to the length of repeats) is viewed as [1, s0, 1, s1, ...], broadcast to
  // [r0, s0, r1, s1, ...] and merged pairwise, so each tile is a whole copy of x.
  const size_t lead = repeats.size() - rank;
  Shape interleaved, tiled, out;
  for (size_t i = 0; i < repeats.size(); ++i) {
    TESSERA_CHECK(repeats[i] >= 0, "repeat: repeat counts {} must be non-negative (for {})", shape_str(repeats),
                  ir::type_str(x.type()));
    const int64_t s = i < lead ? 1 : x.shape()[i - lead];
    interleaved.insert(interleaved.end(), {1, s});
    tiled.insert(tiled.end(), {repeats[i], s});
    out.push_back(repeats[i] * s);
  }
  return reshape(broadcast_to(reshape(x, interleaved), tiled), out);
}

Tensor tril(const Tensor& x, int64_t k) {
  return triangle(x, k, true, "tril");
}
Tensor triu(const Tensor& x, int64_t k) {
  return triangle(x, k, false, "triu");
}

}  // namespace tessera::ops
