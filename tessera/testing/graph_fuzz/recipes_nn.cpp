// Recipes for products and convolutions (alone, sharing inputs, meeting in one sum, with bias /
// activation / residual tails and transposes, as epilogue fusion sees them), pooling and resampling
// with their gradient ops, quantized products, Adam updates and the composite layers (norms, losses,
// attention, dropout).
#include <cmath>

#include "tessera/ops/ops.h"
#include "tessera/ops/quant.h"
#include "tessera/testing/graph_fuzz/builder.h"

namespace tessera::testing::fuzz {
namespace {

// Facts of a product summing `k` terms of x * y.
Facts product_facts(const Candidate& x, const Candidate& y, double k, DType dtype) {
  const double m = std::max(k, 1.0) * x.f.magnitude() * y.f.magnitude();
  return Builder::exact_if(x.f.exact && y.f.exact, -m, m, dtype);
}

Candidate matrix(Builder& b, const Shape& s, DType dtype) {
  return b.float_of_shape(s, dtype);
}

// A random product: batched, broadcast, vector and matrix cases.
void matmul(Builder& b) {
  const DType dt = b.chance(0.85) ? DType::f32 : b.float_dtype();
  const int64_t m = b.dim(6), k = b.dim(6), n = b.dim(6);
  Shape sa{m, k}, sb{k, n};
  const int64_t kind = b.integer(0, 5);
  if (kind == 1) sa.insert(sa.begin(), b.integer(1, 3));  // batch on the left only
  if (kind == 2) {                                        // batch on both, broadcasting
    const int64_t batch = b.integer(1, 3);
    sa.insert(sa.begin(), batch);
    sb.insert(sb.begin(), b.chance(0.5) ? batch : 1);
  }
  if (kind == 3) sa = {k};  // vector @ matrix
  if (kind == 4) sb = {k};  // matrix @ vector
  // The left operand, often an existing value of the right shape (shared inputs).
  Candidate a = matrix(b, sa, dt);
  const Candidate bm = matrix(b, sb, dt);
  Tensor y = ops::matmul(a.t, bm.t);
  Facts f = product_facts(a, bm, static_cast<double>(k), y.dtype());
  if (b.chance(0.2) && y.rank() >= 2) y = ops::transpose(y);  // a transposed product
  b.add(y, f);
}

// Products that share an input and meet in one sum: x@a + y@b, relu(x@a + bias) + x@b, ...
void shared_products(Builder& b) {
  const DType dt = b.chance(0.8) ? DType::f32 : b.float_dtype();
  const int64_t m = b.dim(5), n = b.dim(5), k1 = b.dim(5), k2 = b.dim(5);
  const Candidate x = matrix(b, {m, k1}, dt);
  const Candidate y = b.chance(0.4) ? x : matrix(b, {m, k2}, dt);
  const int64_t ky = y.shape()[1];
  const Candidate wa = matrix(b, {k1, n}, dt), wb = b.chance(0.2) && k1 == ky ? wa : matrix(b, {ky, n}, dt);
  Tensor p = ops::matmul(x.t, wa.t), q = ops::matmul(y.t, wb.t);
  Facts fp = product_facts(x, wa, static_cast<double>(k1), p.dtype());
  Facts fq = product_facts(y, wb, static_cast<double>(ky), q.dtype());
  if (b.chance(0.4)) {
    const Candidate bias = b.float_of_shape({n}, dt);
    p = p + bias.t;
    fp = Builder::exact_if(fp.exact && bias.f.exact, fp.lo + bias.f.lo, fp.hi + bias.f.hi, p.dtype());
  }
  if (b.chance(0.4) && (!b.gradient() || fp.exact)) {
    p = ops::relu(p);
    fp.lo = std::max(fp.lo, 0.0);
  }
  const Tensor z = b.chance(0.8) ? p + q : p - q;
  b.add(z, Builder::exact_if(fp.exact && fq.exact, fp.lo - fq.magnitude(), fp.hi + fq.magnitude(), z.dtype()));
  if (b.chance(0.3)) b.add(p, fp);  // an intermediate used twice: no longer a fusable tail
}

struct ConvSetup {
  Candidate x, w;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  Tensor bias;
};

ConvSetup conv_setup(Builder& b, DType dt) {
  const int64_t rank = b.chance(0.7) ? 2 : 1;
  const int64_t groups = b.choose<int64_t>({1, 1, 1, 2});
  const int64_t cin = groups * b.integer(1, 2), cout = groups * b.integer(1, 2);
  Shape xs{b.integer(1, 2), cin}, ws{cout, cin / groups};
  ConvSetup s;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t kernel = b.integer(1, 3);
    xs.push_back(b.integer(kernel, kernel + 3));
    ws.push_back(kernel);
    s.stride.push_back(b.integer(1, 2));
    s.padding.push_back(b.integer(0, 1));
    s.dilation.push_back(b.choose<int64_t>({1, 1, 2}));
  }
  s.groups = groups;
  s.x = b.float_of_shape(xs, dt);
  s.w = b.float_of_shape(ws, dt);
  if (b.chance(0.5)) s.bias = b.float_of_shape({cout}, dt).t;
  return s;
}

void convolution(Builder& b) {
  const DType dt = b.chance(0.85) ? DType::f32 : b.float_dtype();
  const ConvSetup s = conv_setup(b, dt);
  const double k = static_cast<double>(s.w.t.numel() / s.w.shape()[0]);
  Tensor y = ops::conv(s.x.t, s.w.t, s.bias, s.stride, s.padding, s.dilation, s.groups);
  Facts f = product_facts(s.x, s.w, k, y.dtype());
  f.exact = false;  // the bias's facts are not tracked
  const int64_t tail = b.integer(0, 3);
  if (tail == 1) {
    y = ops::relu(y);
  } else if (tail == 2) {  // two convolutions of one input meeting in a sum
    const Tensor w2 = b.float_of_shape(s.w.shape(), dt).t;
    y = y + ops::conv(s.x.t, w2, {}, s.stride, s.padding, s.dilation, s.groups);
    f.lo *= 2, f.hi *= 2;
  }
  b.add(y, f);
}

void conv_gradients(Builder& b) {
  const DType dt = b.chance(0.85) ? DType::f32 : b.float_dtype();
  const ConvSetup s = conv_setup(b, dt);
  const Tensor y = ops::conv(s.x.t, s.w.t, {}, s.stride, s.padding, s.dilation, s.groups);
  const Candidate g = b.float_of_shape(y.shape(), dt);
  const Shape xs(s.x.shape().begin() + 2, s.x.shape().end()), ks(s.w.shape().begin() + 2, s.w.shape().end());
  const double m = static_cast<double>(y.numel()) * g.f.magnitude() * std::max(s.x.f.magnitude(), s.w.f.magnitude());
  if (b.chance(0.5)) {
    b.add(ops::conv_input_grad(g.t, s.w.t, xs, s.stride, s.padding, s.dilation, s.groups), Facts{-m, m, false});
  } else {
    b.add(ops::conv_weight_grad(s.x.t, g.t, ks, s.stride, s.padding, s.dilation, s.groups), Facts{-m, m, false});
  }
}

void pooling(Builder& b) {
  const bool kink_safe = !b.gradient();
  Candidate x = b.float_operand(!kink_safe);
  if (x.rank() < 3) x = b.fresh_float({b.integer(1, 2), b.integer(1, 3), b.integer(2, 6), b.integer(2, 6)}, x.dtype());
  const int64_t rank = b.chance(0.8) && x.rank() >= 4 ? 2 : 1;
  std::vector<int64_t> kernel, stride, padding, dilation, in_size;
  for (int64_t d = 0; d < rank; ++d) {
    kernel.push_back(b.integer(1, 3));
    stride.push_back(b.integer(1, 2));
    padding.push_back(b.integer(0, kernel.back() / 2));
    dilation.push_back(b.choose<int64_t>({1, 1, 2}));
    in_size.push_back(x.shape()[static_cast<size_t>(x.rank() - rank + d)]);
  }
  const int64_t kind = b.integer(0, 3);
  const bool ceil_mode = b.chance(0.3);
  if (kind == 0) {  // max pool, and its gradient ops directly
    ir::Attrs a{{"kernel", kernel}, {"stride", stride}, {"padding", padding}, {"dilation", dilation}};
    if (ceil_mode) a.set("ceil_mode", true);
    const Tensor y = ir::make_node1("max_pool", {x.t.value()}, a);
    b.add(y, x.f);
    if (x.f.exact && b.chance(0.5)) {  // ties in x route the gradient: exact x only
      const Candidate g = b.float_of_shape(y.shape(), x.dtype());
      const Tensor dx = ir::make_node1("max_pool_grad", {x.t.value(), g.t.value()}, a);
      const double n = static_cast<double>(y.numel());
      b.add(dx, Builder::exact_if(g.f.exact, n * std::min(g.f.lo, 0.0), n * std::max(g.f.hi, 0.0), dx.dtype()));
      const Candidate v = b.float_of_shape(x.shape(), x.dtype());
      b.add(ir::make_node1("max_pool_gather", {x.t.value(), v.t.value()}, a), v.f);
    }
  } else if (kind == 1) {  // average pool and its transpose
    const bool include = b.chance(0.5);
    ir::Attrs a{{"kernel", kernel}, {"stride", stride}, {"padding", padding}, {"count_include_pad", include}};
    if (ceil_mode) a.set("ceil_mode", true);
    const Tensor y = ir::make_node1("avg_pool", {x.t.value()}, a);
    b.add(y, Facts{std::min(x.f.lo, 0.0), std::max(x.f.hi, 0.0), false});
    if (b.chance(0.4)) {
      const Candidate g = b.float_of_shape(y.shape(), x.dtype());
      a.set("input_size", in_size);
      const double m = g.f.magnitude() * static_cast<double>(y.numel());
      b.add(ir::make_node1("avg_pool_grad", {g.t.value()}, a), Facts{-m, m, false});
    }
  } else if (kind == 2) {  // adaptive average pool and its transpose
    std::vector<int64_t> out;
    for (int64_t d = 0; d < rank; ++d) out.push_back(b.integer(1, 4));
    const Tensor y = ir::make_node1("adaptive_avg_pool", {x.t.value()}, ir::Attrs{{"output_size", out}});
    b.add(y, Facts{x.f.lo, x.f.hi, false});
    if (b.chance(0.4)) {
      const Candidate g = b.float_of_shape(y.shape(), x.dtype());
      const double m = g.f.magnitude() * static_cast<double>(y.numel());
      b.add(ir::make_node1("adaptive_avg_pool_grad", {g.t.value()}, ir::Attrs{{"input_size", in_size}}),
            Facts{-m, m, false});
    }
  } else {  // resampling and its transpose
    const std::string mode = b.choose<std::string>({"linear", "nearest", "nearest-exact"});
    const bool linear = mode == "linear";
    const bool align = linear && b.chance(0.5);
    std::vector<int64_t> size;
    std::vector<double> scales;
    const bool by_scale = b.chance(0.3);
    for (int64_t d = 0; d < rank; ++d) {
      if (by_scale) {  // PyTorch's scale_factor: the size is floor(in * scale), the source index uses 1/scale
        scales.push_back(b.choose<double>({0.5, 1.5, 2, 2.5, 3}));
        const double in = static_cast<double>(in_size[static_cast<size_t>(d)]);
        size.push_back(static_cast<int64_t>(std::floor(in * scales.back())));
      } else {
        size.push_back(b.integer(1, 7));
      }
    }
    ir::Attrs a{{"size", size}, {"mode", mode}, {"align_corners", align}};
    if (by_scale) a.set("scales", scales);
    const Tensor y = ir::make_node1("upsample", {x.t.value()}, a);
    b.add(y, linear ? Facts{x.f.lo, x.f.hi, false} : x.f);
    if (b.chance(0.4)) {
      const Candidate g = b.float_of_shape(y.shape(), x.dtype());
      const double m = g.f.magnitude() * static_cast<double>(y.numel());
      ir::Attrs ga{{"input_size", in_size}, {"mode", mode}, {"align_corners", align}};
      if (by_scale) ga.set("scales", scales);
      b.add(ir::make_node1("upsample_grad", {g.t.value()}, ga), Facts{-m, m, !linear && g.f.exact});
    }
  }
}

void quantized(Builder& b) {
  static const std::vector<std::string> types = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q6_k",
                                                 "q2_k", "q3_k", "q5_k", "f16",  "bf16", "f32"};
  const std::string type = b.choose(types);
  const bool k_quant = type.size() == 4 && type[3] == 'k';
  const int64_t block = type[0] == 'f' || type[0] == 'b' ? 1 : k_quant ? 256 : 32;
  const int64_t k = block * b.integer(1, block == 1 ? 40 : block == 256 ? 1 : 3), n = b.integer(1, 9);
  const Array w =
      make_input({DType::f32, {n, k}}, InputSpec::uniform(-1, 1), static_cast<uint64_t>(b.integer(0, 1 << 20)));
  const Tensor blocks = ops::quantize_weights(w, type);
  if (b.chance(0.25)) {
    b.add(ops::dequantize(blocks, type), Facts{-1.5, 1.5, false});
    return;
  }
  const Shape xs = b.chance(0.5) ? Shape{b.integer(1, 5), k} : Shape{b.integer(1, 2), b.integer(1, 3), k};
  const Candidate x = b.float_of_shape(xs, b.chance(0.8) ? DType::f32 : b.float_dtype());
  const double m = 1.5 * static_cast<double>(k) * x.f.magnitude();
  b.add(ops::quantized_matmul(x.t, blocks, type), Facts{-m, m, false});
}

void adam(Builder& b) {
  const DType dt = b.chance(0.8) ? DType::f32 : b.float_dtype();
  const Shape s = b.shape(0, 3);
  const Candidate p = b.float_of_shape(s, dt), g = b.float_of_shape(s, dt), m = b.float_of_shape(s, dt);
  const Candidate v = b.fresh({dt, s}, InputSpec::uniform(0, 2));
  ops::AdamUpdateOptions o;
  o.weight_decay = b.choose<double>({0, 0.01});
  o.decoupled = b.chance(0.5);
  const Tensor lr = Tensor::scalar(b.choose<double>({1e-3, 0.1}), DType::f64);
  const Tensor step = Tensor::scalar(static_cast<double>(b.integer(1, 5)), DType::f64);
  const std::vector<Tensor> out = ops::adam_update(p.t, g.t, m.t, v.t, lr, step, o);
  const double r = std::max({p.f.magnitude(), g.f.magnitude(), m.f.magnitude(), 2.0}) + 1;
  for (const Tensor& t : out) b.add(t, Facts{-r * r, r * r, false});
}

void normalisation(Builder& b) {
  Candidate x = b.float_operand();
  if (x.rank() == 0 || x.t.numel() == 0) return;
  const int64_t kind = b.integer(0, 2);
  const DType dt = x.dtype();
  if (kind == 2 && x.rank() >= 2) {
    const int64_t c = x.shape()[1];
    int64_t groups = 1;
    for (int64_t g = c; g >= 1; --g) {
      if (c % g == 0 && b.chance(0.5)) {
        groups = g;
        break;
      }
    }
    const Tensor w = b.chance(0.5) ? b.float_of_shape({c}, dt).t : Tensor();
    const Tensor bias = b.chance(0.5) ? b.float_of_shape({c}, dt).t : Tensor();
    b.add(ops::group_norm(x.t, groups, w, bias), Facts{-40, 40, false});
    return;
  }
  const int64_t axes = b.integer(1, std::min<int64_t>(x.rank(), 2));
  const Shape normalized(x.shape().end() - axes, x.shape().end());
  const Tensor w = b.chance(0.6) ? b.float_of_shape(normalized, dt).t : Tensor();
  if (kind == 0) {
    const Tensor bias = b.chance(0.5) ? b.float_of_shape(normalized, dt).t : Tensor();
    b.add(ops::layer_norm(x.t, normalized, w, bias), Facts{-40, 40, false});
  } else {
    b.add(ops::rms_norm(x.t, normalized, w), Facts{-40, 40, false});
  }
}

void losses(Builder& b) {
  const DType dt = b.chance(0.8) ? DType::f32 : b.float_dtype();
  const int64_t n = b.integer(1, 5), c = b.integer(1, 5);
  const ops::Reduction reduction =
      b.choose<ops::Reduction>({ops::Reduction::Mean, ops::Reduction::Sum, ops::Reduction::None});
  const int64_t kind = b.integer(0, 2);
  if (kind == 0) {
    const Candidate logits = b.float_of_shape({n, c}, dt);
    const Candidate targets = b.fresh_index({n}, c);
    ops::CrossEntropyOptions o;
    o.reduction = reduction;
    o.label_smoothing = b.choose<double>({0, 0, 0.1});
    b.add(ops::cross_entropy(logits.t, targets.t, o), Facts{-100, 100, false});
  } else if (kind == 1) {
    const Candidate pred = b.float_operand();
    const Candidate target = b.float_of_shape(pred.shape(), pred.dtype());
    const double m = pred.f.magnitude() + target.f.magnitude();
    b.add(ops::mse_loss(pred.t, target.t, reduction), Facts{0, m * m, false});
  } else {
    const Candidate logits = b.float_operand();
    const Candidate target = b.fresh({logits.dtype(), logits.shape()}, InputSpec::uniform(0, 1));
    b.add(ops::binary_cross_entropy_with_logits(logits.t, target.t, reduction), Facts{0, 100, false});
  }
}

void attention(Builder& b) {
  const DType dt = b.chance(0.8) ? DType::f32 : b.float_dtype();
  const int64_t batch = b.integer(1, 2), hk = b.integer(1, 2), group = b.integer(1, 2), l = b.integer(1, 4),
                s = b.integer(1, 4), d = b.integer(1, 4);
  const Candidate q = b.float_of_shape({batch, hk * group, l, d}, dt);
  const Candidate k = b.float_of_shape({batch, hk, s, d}, dt);
  const Candidate v = b.float_of_shape({batch, hk, s, b.chance(0.7) ? d : b.integer(1, 4)}, dt);
  Tensor mask;
  const bool causal = b.chance(0.3);
  if (!causal && b.chance(0.3)) mask = b.fresh({DType::boolean, {l, s}}, InputSpec::boolean()).t;
  if (causal && l > s) return;  // every query row must see a key
  const double m = v.f.magnitude();
  b.add(ops::scaled_dot_product_attention(q.t, k.t, v.t, mask, causal), Facts{-m, m, false});
}

// A decode step's attention: queries over a cache whose rows past each position are never read.
void kv_cache_attention(Builder& b) {
  const DType dt = b.chance(0.8) ? DType::f32 : b.float_dtype();
  const int64_t m = b.integer(1, 3), hk = b.integer(1, 2), group = b.integer(1, 2), rows = b.integer(1, 6),
                d = b.integer(1, 4);
  const Candidate q = b.float_of_shape({m, hk * group, d}, dt);
  const Candidate k = b.float_of_shape({rows, hk, d}, dt);
  const Candidate v = b.float_of_shape({rows, hk, b.chance(0.7) ? d : b.integer(1, 4)}, dt);
  const Candidate positions = b.fresh_index({m}, rows);
  const double mag = v.f.magnitude();
  b.add(ops::kv_cache_attention(q.t, k.t, v.t, positions.t), Facts{-mag, mag, false});
}

// nn.Linear's product: x @ w^T + b with w [out, in], often followed by an activation (one GEMM with
// a transposed operand and a bias epilogue on the CPU backend).
void linear(Builder& b) {
  const DType dt = b.chance(0.85) ? DType::f32 : b.float_dtype();
  const int64_t in = b.dim(6), out = b.dim(6);
  const Shape xs = b.chance(0.6) ? Shape{b.dim(5), in} : Shape{b.integer(1, 3), b.integer(1, 3), in};
  const Candidate x = b.float_of_shape(xs, dt), w = b.float_of_shape({out, in}, dt);
  const Tensor bias = b.chance(0.7) ? b.float_of_shape({out}, dt).t : Tensor();
  Tensor y = ops::linear(x.t, w.t, bias);
  const double m = static_cast<double>(in) * x.f.magnitude() * w.f.magnitude() + 2;
  if (b.chance(0.4) && !b.gradient()) y = ops::relu(y);
  b.add(y, Facts{-m, m, false});
}

void dropout(Builder& b) {
  const Candidate x = b.float_operand();
  ops::Generator gen(static_cast<uint64_t>(b.integer(0, 1000)));
  const double p = b.choose<double>({0.5, 0.25});
  b.add(ops::dropout(x.t, p, true, gen), Facts{x.f.lo * 2, x.f.hi * 2, false});
}

}  // namespace

std::vector<Recipe> nn_recipes() {
  return {
      {"matmul", {"matmul", "permute"}, 3, matmul},
      {"shared_products", {"matmul", "add", "sub", "relu"}, 2, shared_products},
      {"convolution", {"conv", "add", "relu"}, 2, convolution},
      {"conv_gradients", {"conv_input_grad", "conv_weight_grad"}, 1, conv_gradients},
      {"pooling",
       {"max_pool", "max_pool_grad", "max_pool_gather", "avg_pool", "avg_pool_grad", "adaptive_avg_pool",
        "adaptive_avg_pool_grad", "upsample", "upsample_grad"},
       2.5,
       pooling},
      {"quantized", {"quantized_matmul", "dequantize"}, 1, quantized},
      {"adam", {"adam_update"}, 0.8, adam},
      {"normalisation", {"mean", "sub", "mul", "rsqrt", "add"}, 1.5, normalisation},
      {"losses", {"log_softmax", "gather", "mean", "sum"}, 1, losses},
      {"attention", {"matmul", "softmax"}, 1, attention},
      {"kv_cache_attention", {"kv_cache_attention"}, 0.6, kv_cache_attention},
      {"dropout", {"bernoulli", "where", "mul"}, 0.5, dropout},
      {"linear", {"matmul", "permute", "add"}, 1.5, linear},
  };
}

}  // namespace tessera::testing::fuzz
