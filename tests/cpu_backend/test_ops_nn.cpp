// Differential samples for nn ops: softmax family, convolutions and their gradients, pooling,
// upsampling, matmul in every layout, composites (norms, losses, attention) and quantized weights.
#include "op_samples.h"
#include "tessera/ops/optim.h"
#include "tessera/ops/quant.h"

namespace tessera::test {
namespace {

using Ints = std::vector<int64_t>;

ir::Attrs pool_attrs(Ints kernel, Ints stride, Ints padding, Ints dilation) {
  return ir::Attrs{{"kernel", kernel}, {"stride", stride}, {"padding", padding}, {"dilation", dilation}};
}

void add_softmax_samples(std::vector<Sample>& s) {
  for (DType dt : {DType::f32, DType::f64, DType::bf16}) {
    Sample x{std::string("softmax family ") + dtype_name(dt),
             {{dt, {5, 37}}, {dt, {2, 3, 4}}},
             [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
               return {ops::softmax(a[0]), ops::log_softmax(a[0]), ops::softmax(a[1], 1), ops::log_softmax(a[1], 0),
                       ops::softmax(a[0], 0)};
             }};
    x.lo = -8;
    x.hi = 8;
    s.push_back(std::move(x));
  }
  s.push_back({"softmax rank 1 and empty",
               {{DType::f32, {7}}, {DType::f32, {0, 4}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::softmax(a[0]), ops::log_softmax(a[1])};
               }});
}

void add_conv_samples(std::vector<Sample>& s) {
  for (DType dt : {DType::f32, DType::f64}) {
    const std::string t = dtype_name(dt);
    s.push_back({"conv2d " + t,
                 {{dt, {2, 3, 9, 8}}, {dt, {4, 3, 3, 3}}, {dt, {4}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::conv2d(a[0], a[1], a[2]), ops::conv2d(a[0], a[1], {}, {2, 1}, {1, 2}, {1, 2}),
                           ops::relu(ops::conv2d(a[0], a[1], a[2], {1, 1}, {1, 1}))};
                 }});
    s.push_back({"conv2d groups " + t,
                 {{dt, {1, 4, 6, 6}}, {dt, {6, 2, 3, 2}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::conv2d(a[0], a[1], {}, {1, 2}, {1, 0}, {1, 1}, 2)};
                 }});
    s.push_back({"conv1d " + t, {{dt, {2, 3, 11}}, {dt, {5, 3, 4}}}, one_output([](auto& a) {
                   return ops::conv1d(a[0], a[1], {}, 2, 1);
                 })});
    s.push_back({"conv_transpose2d " + t, {{dt, {1, 4, 5, 5}}, {dt, {4, 2, 3, 3}}}, one_output([](auto& a) {
                   return ops::conv_transpose2d(a[0], a[1], {}, {2, 2}, {1, 1});
                 })});
    s.push_back({"conv gradients " + t,
                 {{dt, {2, 3, 8, 7}}, {dt, {4, 3, 3, 2}}, {dt, {2, 4, 4, 3}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::conv_input_grad(a[2], a[1], {8, 7}, {2, 2}, {1, 0}, {1, 1}),
                           ops::conv_weight_grad(a[0], a[2], {3, 2}, {2, 2}, {1, 0}, {1, 1})};
                 }});
    s.push_back({"conv backward through grad " + t,
                 {{dt, {2, 2, 6, 6}}, {dt, {3, 2, 3, 3}}, {dt, {3}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   ScalarFn f = [](const std::vector<Tensor>& b) {
                     return ops::sum(ops::square(ops::conv2d(b[0], b[1], b[2], {1, 1}, {1, 1})));
                   };
                   return grad(f)({a[0], a[1], a[2]});
                 }});
  }
}

void add_pool_samples(std::vector<Sample>& s) {
  for (DType dt : {DType::f32, DType::f64}) {
    const std::string t = dtype_name(dt);
    s.push_back({"pools " + t, {{dt, {2, 3, 9, 8}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::max_pool2d(a[0], {2, 2}),
                           ops::max_pool2d(a[0], {3, 2}, {2, 1}, {1, 1}, {1, 2}),
                           ops::avg_pool2d(a[0], {2, 3}),
                           ops::avg_pool2d(a[0], {3, 3}, {2, 2}, {1, 1}, false),
                           ops::avg_pool2d(a[0], {3, 3}, {2, 2}, {1, 1}, true),
                           ops::adaptive_avg_pool2d(a[0], {4, 3})};
                 }});
    s.push_back({"pool gradients " + t,
                 {{dt, {2, 3, 8, 6}}, {dt, {2, 3, 4, 3}}, {dt, {2, 3, 8, 6}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   const ir::Attrs mp = pool_attrs({2, 2}, {2, 2}, {0, 0}, {1, 1});
                   ir::Attrs ap{{"kernel", Ints{2, 2}},
                                {"stride", Ints{2, 2}},
                                {"padding", Ints{0, 0}},
                                {"count_include_pad", true},
                                {"input_size", Ints{8, 6}}};
                   return {node1("max_pool_grad", {a[0], a[1]}, mp), node1("max_pool_gather", {a[0], a[2]}, mp),
                           node1("avg_pool_grad", {a[1]}, ap),
                           node1("adaptive_avg_pool_grad", {a[1]}, ir::Attrs{{"input_size", Ints{8, 6}}})};
                 }});
    // Ceil mode on odd sizes: partial last windows (and the 2x2 stride-2 pool off its vector path).
    s.push_back({"pools ceil mode " + t, {{dt, {2, 3, 9, 7}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::max_pool2d(a[0], {2, 2}, {2, 2}, {0, 0}, {1, 1}, true),
                           ops::max_pool2d(a[0], {3, 3}, {3, 2}, {1, 1}, {1, 1}, true),
                           ops::avg_pool2d(a[0], {3, 3}, {2, 2}, {1, 1}, false, true),
                           ops::avg_pool2d(a[0], {3, 2}, {2, 2}, {1, 0}, true, true)};
                 }});
    s.push_back({"pool gradients ceil mode " + t,
                 {{dt, {2, 3, 9, 7}}, {dt, {2, 3, 5, 4}}, {dt, {2, 3, 9, 7}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   const ir::Attrs mp = pool_attrs({2, 2}, {2, 2}, {0, 0}, {1, 1}).set("ceil_mode", true);
                   const ir::Attrs ap{{"kernel", Ints{3, 3}},      {"stride", Ints{2, 2}}, {"padding", Ints{1, 1}},
                                      {"count_include_pad", true}, {"ceil_mode", true},    {"input_size", Ints{9, 7}}};
                   return {node1("max_pool_grad", {a[0], a[1]}, mp), node1("max_pool_gather", {a[0], a[2]}, mp),
                           node1("avg_pool_grad", {a[1]}, ap)};
                 }});
    s.push_back(
        {"upsample " + t,
         {{dt, {1, 2, 3, 4}}, {dt, {1, 2, 6, 5}}},
         [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
           return {
               ops::upsample2d(a[0], {6, 5}), ops::upsample2d(a[0], {5, 7}, ops::UpsampleMode::Bilinear),
               ops::upsample2d(a[0], {5, 7}, ops::UpsampleMode::Bilinear, true),
               node1("upsample_grad", {a[1]},
                     ir::Attrs{{"input_size", Ints{3, 4}}, {"mode", std::string("linear")}, {"align_corners", false}})};
         }});
  }
}

void add_matmul_samples(std::vector<Sample>& s) {
  auto mm = [](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::matmul(a[0], a[1])}; };
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{5, 7}, {7, 3}},          {{7}, {7, 3}},    {{5, 7}, {7}},    {{7}, {7}},        {{2, 5, 7}, {7, 3}},
      {{2, 1, 5, 7}, {3, 7, 4}}, {{5, 0}, {0, 3}}, {{0, 4}, {4, 2}}, {{1, 9}, {9, 70}}, {{65, 33}, {33, 17}}};
  for (DType dt : {DType::f32, DType::f64, DType::i32, DType::bf16}) {
    for (const auto& [sa, sb] : shapes) {
      s.push_back(
          {std::string("matmul ") + ir::type_str({dt, sa}) + " x " + ir::type_str({dt, sb}), {{dt, sa}, {dt, sb}}, mm});
    }
  }
  s.push_back({"matmul mixed dtypes", {{DType::f32, {3, 4}}, {DType::f64, {4, 2}}}, mm});
  s.push_back({"matmul transposed operands",
               {{DType::f32, {7, 5}}, {DType::f32, {3, 7}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 const Tensor at = ops::transpose(a[0], 0, 1), bt = ops::transpose(a[1], 0, 1);
                 return {ops::matmul(at, bt), ops::matmul(a[1], a[0]), ops::matmul(ops::transpose(bt, 0, 1), a[0])};
               }});
}

void add_optim_samples(std::vector<Sample>& s) {
  for (DType dt : {DType::f32, DType::f64}) {
    for (bool decoupled : {false, true}) {
      Sample sample{
          std::string("adam_update ") + dtype_name(dt) + (decoupled ? " adamw" : ""),
          {{dt, {5, 7}},
           {dt, {5, 7}},
           {dt, {5, 7}},
           {dt, {5, 7}},
           {dt, {3}},
           {dt, {3}},
           {DType::f64, {}},
           {DType::f64, {}}},
          [decoupled](const std::vector<Tensor>& a) -> std::vector<Tensor> {
            const ops::AdamUpdateOptions o{
                .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6, .weight_decay = 0.01, .decoupled = decoupled};
            std::vector<Tensor> out = ops::adam_update(a[0], a[1], a[2], a[3], a[6], a[7], o);
            // A second, small parameter joins the same fused pass.
            for (const Tensor& t : ops::adam_update(a[4], a[5], a[5] * 0.5, ops::square(a[5]), a[6], a[7], o)) {
              out.push_back(t);
            }
            return out;
          }};
      sample.data = [](size_t i, const ir::TensorType& t, uint64_t seed) {
        if (i == 6) return Array::scalar(0.01, DType::f64);
        if (i == 7) return Array::scalar(4, DType::f64);
        return i == 3 ? sample_array(t, seed, 0, 0.1) : sample_array(t, seed, -1, 1);
      };
      s.push_back(std::move(sample));
    }
  }
}

void add_composite_samples(std::vector<Sample>& s) {
  s.push_back({"norms",
               {{DType::f32, {4, 6, 5}}, {DType::f32, {5}}, {DType::f32, {5}}, {DType::f32, {6}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::layer_norm(a[0], {5}, a[1], a[2]), ops::rms_norm(a[0], {5}, a[1]),
                         ops::group_norm(a[0], 3, a[3], a[3]), ops::layer_norm(a[0], {6, 5})};
               }});
  Sample losses{"losses",
                {{DType::f32, {6, 5}}, {DType::i64, {6}}, {DType::f32, {6, 5}}},
                [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                  return {ops::cross_entropy(a[0], a[1]), ops::mse_loss(a[0], a[2]),
                          ops::binary_cross_entropy_with_logits(a[0], ops::sigmoid(a[2])),
                          ops::nll_loss(ops::log_softmax(a[0]), a[1])};
                }};
  losses.data = [](size_t i, const ir::TensorType& t, uint64_t seed) {
    if (i != 1) return sample_array(t, seed, -2, 2);
    std::vector<int64_t> v(static_cast<size_t>(t.numel()));
    for (size_t j = 0; j < v.size(); ++j) v[j] = static_cast<int64_t>((j * 3 + seed) % 5);
    return Array::from_vector(v, t.shape);
  };
  s.push_back(losses);
  s.push_back({"attention",
               {{DType::f32, {2, 4, 6, 8}}, {DType::f32, {2, 2, 5, 8}}, {DType::f32, {2, 2, 5, 8}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::scaled_dot_product_attention(a[0], a[1], a[2]),
                         ops::scaled_dot_product_attention(a[0], ops::slice(a[1], 2, 0, 5), a[2], {}, true)};
               }});
  // A decode step's attention over a cache: positions as a run-time input (distinct rows, 0..6).
  Sample cached{"kv_cache_attention",
                {{DType::f32, {3, 4, 8}}, {DType::f32, {7, 2, 8}}, {DType::f32, {7, 2, 8}}, {DType::i64, {3}}},
                [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                  return {ops::kv_cache_attention(a[0], a[1], a[2], a[3]),
                          ops::kv_cache_attention(a[0], a[1], a[2], ops::cast(a[3], DType::i32), 0.25)};
                }};
  cached.data = [](size_t i, const ir::TensorType& t, uint64_t seed) {
    if (i != 3) return sample_array(t, seed, -2, 2);
    return Array::from_vector<int64_t>({static_cast<int64_t>(seed % 3), 6, 4}, t.shape);
  };
  s.push_back(cached);
  const auto q8_weights = [] { return ops::quantize_weights(sample_array({DType::f32, {4, 64}}, 5, -1, 1), "q8_0"); };
  s.push_back({"dequantize", {{DType::f32, {3, 64}}}, [=](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::dequantize(q8_weights(), "q8_0") + ops::sum(a[0])};
               }});
  s.push_back({"quantized_matmul", {{DType::f32, {3, 64}}}, [=](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::quantized_matmul(a[0], q8_weights(), "q8_0")};
               }});
  s.back().tol = 0.05;  // the CPU kernel quantizes the activations to 8 bits (library_ops_quant.cpp)
}

}  // namespace

std::vector<Sample> nn_samples() {
  std::vector<Sample> s;
  add_softmax_samples(s);
  add_conv_samples(s);
  add_pool_samples(s);
  add_matmul_samples(s);
  add_composite_samples(s);
  add_optim_samples(s);
  return s;
}

}  // namespace tessera::test
