// Attention of new queries over a key/value cache: query i attends to cache rows 0..positions[i], so
// one compiled decode graph serves every position and only the rows written so far are read. Its
// decomposition (a position mask and scaled_dot_product_attention over the whole cache) serves backends
// without a kernel and the StableHLO exporter; its gradient is the decomposition's.
#include <cmath>
#include <limits>

#include "tessera/autodiff/decomposed_vjp.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"
#include "tessera/ops/shape_util.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;
using ir::Value;

constexpr const char* kKvAttentionOp = "kv_cache_attention";

std::vector<TensorType> infer_kv_attention(const std::vector<TensorType>& in, const Attrs&) {
  const TensorType &q = in[0], &k = in[1], &v = in[2], &pos = in[3];
  if (!is_floating(q.dtype) || !is_floating(k.dtype) || k.dtype != v.dtype) {
    ir::op_fail(kKvAttentionOp, in, "q must be floating and k and v share one floating dtype (an f16 cache beside f32 queries "
                "is fine), got {}, {} and {}", dtype_name(q.dtype), dtype_name(k.dtype), dtype_name(v.dtype));
  }
  if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3) {
    ir::op_fail(kKvAttentionOp, in, "q [tokens, heads, dim], k and v [cache rows, kv heads, dim] must have rank 3, got {}, {} and {}",
                q.rank(), k.rank(), v.rank());
  }
  if (pos.dtype != DType::i32 && pos.dtype != DType::i64) {
    ir::op_fail(kKvAttentionOp, in, "positions must be i32 or i64, got {}", dtype_name(pos.dtype));
  }
  if (pos.rank() != 1 || pos.shape[0] != q.shape[0]) {
    ir::op_fail(kKvAttentionOp, in, "positions must be 1-D with one entry per query ({}), got shape {}", q.shape[0],
                shape_str(pos.shape));
  }
  if (k.shape[0] != v.shape[0] || k.shape[1] != v.shape[1]) {
    ir::op_fail(kKvAttentionOp, in, "k and v must agree on rows and heads, got {} and {}", shape_str(k.shape), shape_str(v.shape));
  }
  if (q.shape[2] != k.shape[2]) {
    ir::op_fail(kKvAttentionOp, in, "q and k must have the same head dim, got {} and {}", q.shape[2], k.shape[2]);
  }
  if (k.shape[1] == 0 || q.shape[1] % k.shape[1] != 0) {
    ir::op_fail(kKvAttentionOp, in, "{} query heads cannot be grouped over {} key/value heads (a multiple is needed)", q.shape[1],
                k.shape[1]);
  }
  return {{q.dtype, {q.shape[0], q.shape[1], v.shape[2]}}};
}

double scale_of(const Attrs& a, int64_t head_dim) {
  const double s = a.get_float("scale");
  return s > 0 ? s : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

Array kv_attention_reference(const std::vector<Array>& in, const Attrs& a, const TensorType& out_type) {
  const Shape &qs = in[0].shape(), &ks = in[1].shape(), &vs = in[2].shape();
  const int64_t m = qs[0], hq = qs[1], d = qs[2], rows = ks[0], hk = ks[1], dv = vs[2], group = hq / hk;
  const double scale = scale_of(a, d);
  const std::vector<double> q = in[0].to_f64(), k = in[1].to_f64(), v = in[2].to_f64();
  const std::vector<int64_t> pos = in[3].astype(DType::i64).contiguous().to_vector<int64_t>();
  std::vector<double> out(static_cast<size_t>(m * hq * dv), 0.0), scores;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t p = pos[static_cast<size_t>(i)];
    if (p < 0 || p >= rows) {
      ir::op_fail(kKvAttentionOp, types_of(in), "position {} of query {} is outside the cache's {} rows", p, i, rows);
    }
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t g = h / group;
      scores.assign(static_cast<size_t>(p + 1), 0.0);
      double best = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j <= p; ++j) {
        double s = 0;
        for (int64_t c = 0; c < d; ++c) {
          s += q[static_cast<size_t>((i * hq + h) * d + c)] * k[static_cast<size_t>((j * hk + g) * d + c)];
        }
        scores[static_cast<size_t>(j)] = s * scale;
        best = std::max(best, s * scale);
      }
      double total = 0;
      for (double& s : scores) total += (s = std::exp(s - best));
      for (int64_t j = 0; j <= p; ++j) {
        const double w = scores[static_cast<size_t>(j)] / total;
        for (int64_t c = 0; c < dv; ++c) {
          out[static_cast<size_t>((i * hq + h) * dv + c)] += w * v[static_cast<size_t>((j * hk + g) * dv + c)];
        }
      }
    }
  }
  return Array::from_vector(out, out_type.shape).astype(out_type.dtype);
}

// softmax over the rows each query may see, through scaled_dot_product_attention with a mask.
std::vector<Value> decompose_kv_attention(const std::vector<Value>& in, const Attrs& a) {
  const Tensor q(in[0]), positions(in[3]);
  const Tensor k = cast(Tensor(in[1]), q.dtype()), v = cast(Tensor(in[2]), q.dtype());  // a narrower cache
  const int64_t rows = k.dim(0), m = q.dim(0);
  const Tensor visible =
      le(reshape(arange(rows), {1, rows}), reshape(cast(positions, DType::i64), {m, 1}));  // [m, rows]
  const Tensor o = scaled_dot_product_attention(transpose(q, 0, 1), transpose(k, 0, 1), transpose(v, 0, 1), visible,
                                                false, scale_of(a, q.dim(2)));
  return {transpose(o, 0, 1).value()};
}

}  // namespace

Tensor kv_cache_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& positions,
                          std::optional<double> scale) {
  return ir::make_node1(kKvAttentionOp, {q, k, v, positions}, {{"scale", scale.value_or(0.0)}});
}

void register_nn_kv_attention_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = kKvAttentionOp,
      .min_inputs = 4,
      .max_inputs = 4,
      .attrs = {{"scale", ir::AttrKind::Float}},
      .infer = infer_kv_attention,
      .reference = [](const std::vector<Array>& in, const Attrs& a,
                      const std::vector<TensorType>& out) -> std::vector<Array> {
        return {kv_attention_reference(in, a, out[0])};
      },
      .vjp = autodiff::vjp_through_decomposition,
      .decompose = decompose_kv_attention,
  });
}

}  // namespace tessera::ops
