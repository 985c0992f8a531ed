// matmul with NumPy semantics as stablehlo.dot_general: 1-D operands become matrices, operand dtypes
// promote, batch axes broadcast. A right-hand matrix without batch axes (a linear layer's weight)
// contracts directly, without materialising a broadcast copy.
#include "tessera/io/stablehlo/lower.h"

namespace tessera::io::stablehlo {

void add_linalg_lowerings(LoweringTable& t) {
  t.add("matmul", [](LowerContext& c) -> std::vector<Val> {
    Emitter& e = c.e;
    const std::string elem = c.out_elem();
    const bool highest = c.highest() && is_float_element(elem);
    Val a = e.convert(c.in[0], elem), b = e.convert(c.in[1], elem);
    if (a.rank() == 1) a = e.reshape(a, {1, a.shape[0]});
    if (b.rank() == 1) b = e.reshape(b, {b.shape[0], 1});
    const Shape a_batch(a.shape.begin(), a.shape.end() - 2), b_batch(b.shape.begin(), b.shape.end() - 2);
    const int64_t m = a.shape[a.shape.size() - 2], n = b.shape.back();
    Val product;
    if (b_batch.empty()) {
      // [..., m, k] x [k, n] -> [..., m, n]
      product = e.dot_general(a, b, {}, {}, {a.rank() - 1}, {0}, highest);
    } else if (a_batch.empty()) {
      // [m, k] x [..., k, n] -> [m, ..., n], then m moves behind the batch axes.
      product = e.dot_general(a, b, {}, {}, {1}, {b.rank() - 2}, highest);
      std::vector<int64_t> perm = iota_axes(static_cast<int64_t>(b_batch.size()), 1);
      perm.push_back(0);
      perm.push_back(product.rank() - 1);
      product = e.transpose(product, perm);
    } else {
      const Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");
      Shape as = batch, bs = batch;
      as.insert(as.end(), {m, a.shape.back()});
      bs.insert(bs.end(), {b.shape[b.shape.size() - 2], n});
      a = e.broadcast_to(a, as);
      b = e.broadcast_to(b, bs);
      const int64_t nb = static_cast<int64_t>(batch.size());
      product = e.dot_general(a, b, iota_axes(nb), iota_axes(nb), {nb + 1}, {nb}, highest);
    }
    return {e.reshape(product, c.out_shape())};
  });
}

}  // namespace tessera::io::stablehlo
