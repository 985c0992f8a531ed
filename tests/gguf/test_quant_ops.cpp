// The graph ops on quantized weights: dequantize and quantized_matmul (values against independent
// formulas, shape/dtype/attribute errors, gradients in x including a second derivative).
#include "tessera/backends/backend.h"
#include "tessera/ops/quant.h"
#include "tessera/quant/quantize.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Array random_f32(const Shape& shape, uint64_t seed, double scale = 1.0) {
  return random_array(shape, seed, -scale, scale, DType::f32);
}

// Independent oracle: y[i, j] = sum_p x[i, p] * w[j, p] in double.
std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w, int64_t m, int64_t n,
                           int64_t k) {
  std::vector<double> y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) y[i * n + j] += x[i * k + p] * w[j * k + p];
  return y;
}

}  // namespace

TEST(QuantOps, DequantizeDecodesEveryRow) {
  const Array w = random_f32({3, 64}, 1);
  for (const char* type : {"q8_0", "q4_1", "q5_0", "f16", "bf16", "f32"}) {
    SCOPED_TRACE(type);
    const Tensor blocks = ops::quantize_weights(w, type);
    EXPECT_EQ(blocks.dtype(), DType::u8);
    EXPECT_EQ(blocks.shape()[1], quant::row_bytes(quant::parse_type(type), 64));
    const Tensor d = ops::dequantize(blocks, type);
    expect_shape(d, {3, 64});
    EXPECT_EQ(d.dtype(), DType::f32);
    const std::vector<uint8_t> bytes = quant::quantize(quant::parse_type(type), w.data<float>(), 3, 64);
    const std::vector<float> want = quant::dequantize(quant::parse_type(type), bytes.data(), bytes.size(), 3, 64);
    EXPECT_EQ(d.to_vector<float>(), want);
    EXPECT_EQ(ops::dequantize_array(blocks.array(), type).to_vector<float>(), want);
  }
}

TEST(QuantOps, DequantizeHandValues) {
  // One Q8_0 block: d = 0.5 (f16 0x3800), values -3..28.
  std::vector<uint8_t> block = {0x00, 0x38};
  for (int j = 0; j < 32; ++j) block.push_back(static_cast<uint8_t>(static_cast<int8_t>(j - 3)));
  Array a = Array::empty(DType::u8, {1, 34});
  std::memcpy(a.raw_data(), block.data(), block.size());
  std::vector<double> want(32);
  for (int j = 0; j < 32; ++j) want[j] = 0.5 * (j - 3);
  expect_close(ops::dequantize(Tensor(a), "q8_0"), want, 0, 0);
  // Leading axes pass through: [2, 1, 34] -> [2, 1, 32].
  Array two = Array::empty(DType::u8, {2, 1, 34});
  std::memcpy(two.raw_data(), block.data(), 34);
  std::memcpy(static_cast<uint8_t*>(two.raw_data()) + 34, block.data(), 34);
  expect_shape(ops::dequantize(Tensor(two), "Q8_0"), {2, 1, 32});
}

TEST(QuantOps, DequantizeShapeErrors) {
  const Tensor f = Tensor(Array::zeros(DType::f32, {2, 34}));
  EXPECT_TESSERA_ERROR(ops::dequantize(f, "q8_0"), "dequantize", "f32[2, 34]", "must be u8");
  const Tensor u = Tensor(Array::zeros(DType::u8, {2, 35}));
  EXPECT_TESSERA_ERROR(ops::dequantize(u, "q8_0"), "dequantize", "u8[2, 35]", "35 bytes", "34 bytes each");
  EXPECT_TESSERA_ERROR(ops::dequantize(u, "q9_9"), "dequantize", "u8[2, 35]", "unknown tensor type 'q9_9'");
  EXPECT_TESSERA_ERROR(ops::dequantize(Tensor(Array::zeros(DType::u8, {66})), "iq2_xxs"), "dequantize",
                       "'iq2_xxs' cannot be decoded");
  EXPECT_TESSERA_ERROR(ops::dequantize(Tensor(Array::scalar(1, DType::u8)), "q8_0"), "dequantize", "u8[]",
                       "at least one dimension");
}

// The exact definition (weights decoded, products in double) is the reference backend's promise; the
// CPU backend quantizes the activations like llama.cpp (tests/cpu_backend/test_quantized_matmul.cpp).
// These tests pin the reference backend whatever TESSERA_BACKEND says.
class ExactQuantOps : public ::testing::Test {
 protected:
  void SetUp() override { backends::set_default_backend(backends::reference_backend()); }
  void TearDown() override { backends::set_default_backend(saved_); }

 private:
  backends::Backend& saved_ = backends::default_backend();
};

TEST_F(ExactQuantOps, QuantizedMatmulMatchesTheDefinition) {
  const int64_t m = 3, n = 5, k = 256;
  const Array x = random_f32({m, k}, 2);
  const Array w = random_f32({n, k}, 3, 0.2);
  for (const char* type : {"q4_0", "q4_k", "q6_k", "q5_1", "f16"}) {
    SCOPED_TRACE(type);
    const Tensor wq = ops::quantize_weights(w, type);
    const Tensor y = ops::quantized_matmul(Tensor(x), wq, type);
    expect_shape(y, {m, n});
    EXPECT_EQ(y.dtype(), DType::f32);
    const std::vector<double> wd = ops::dequantize(wq, type).array().to_f64();
    expect_close(y, linear(x.to_f64(), wd, m, n, k), 1e-5, 1e-5);
  }
}

TEST_F(ExactQuantOps, QuantizedMatmulLeadingAxesAndVectors) {
  const Array w = random_f32({4, 32}, 4);
  const Tensor wq = ops::quantize_weights(w, "q8_0");
  const std::vector<double> wd = ops::dequantize(wq, "q8_0").array().to_f64();
  const Array x3 = random_f32({2, 3, 32}, 5);
  const Tensor y3 = ops::quantized_matmul(Tensor(x3), wq, "q8_0");
  expect_shape(y3, {2, 3, 4});
  expect_close(y3, linear(x3.to_f64(), wd, 6, 4, 32), 1e-5, 1e-5);
  const Array v = random_f32({32}, 6);
  const Tensor yv = ops::quantized_matmul(Tensor(v), wq, "q8_0");
  expect_shape(yv, {4});
  expect_close(yv, linear(v.to_f64(), wd, 1, 4, 32), 1e-5, 1e-5);
  // f64 activations give an f64 result.
  const Tensor y64 = ops::quantized_matmul(Tensor(v.astype(DType::f64)), wq, "q8_0");
  EXPECT_EQ(y64.dtype(), DType::f64);
  // bf16 activations stay bf16.
  EXPECT_EQ(ops::quantized_matmul(Tensor(v.astype(DType::bf16)), wq, "q8_0").dtype(), DType::bf16);
}

TEST(QuantOps, QuantizedMatmulErrors) {
  const Tensor wq = ops::quantize_weights(random_f32({4, 64}, 7), "q4_0");  // u8[4, 36]
  const Tensor x = Tensor(Array::zeros(DType::f32, {2, 32}));
  EXPECT_TESSERA_ERROR(ops::quantized_matmul(x, wq, "q4_0"), "quantized_matmul", "f32[2, 32]", "u8[4, 36]",
                       "x has 32 columns", "hold 64 values");
  EXPECT_TESSERA_ERROR(ops::quantized_matmul(Tensor(Array::zeros(DType::i32, {2, 64})), wq, "q4_0"), "quantized_matmul",
                       "i32[2, 64]", "x must be floating");
  EXPECT_TESSERA_ERROR(
      ops::quantized_matmul(Tensor(Array::zeros(DType::f32, {64})), Tensor(Array::zeros(DType::u8, {36})), "q4_0"),
      "quantized_matmul", "u8[36]", "[N, row_bytes]");
  EXPECT_TESSERA_ERROR(ops::quantized_matmul(Tensor(Array::zeros(DType::f32, {64})), wq, "q4_k"), "quantized_matmul",
                       "36 bytes", "q4_k");
  EXPECT_TESSERA_ERROR(ops::quantized_matmul(Tensor(Array::scalar(1.0)), wq, "q4_0"), "quantized_matmul",
                       "at least one dimension");
  EXPECT_TESSERA_ERROR(ops::quantize_array(Array::scalar(1.0), "q8_0"), "quantize_array", "scalar");
  EXPECT_TESSERA_ERROR(ops::dequantize_array(Array::zeros(DType::f32, {34}), "q8_0"), "dequantize_array", "f32");
}

TEST(QuantOps, GradientWithRespectToActivations) {
  const Tensor wq = ops::quantize_weights(random_f32({3, 32}, 8), "q5_0");
  const Fn f = [wq](const std::vector<Tensor>& in) { return ops::quantized_matmul(in[0], wq, "q5_0"); };
  EXPECT_GRADIENTS_MATCH(f, {random_array({2, 32}, 9)});
  EXPECT_GRADIENTS_MATCH(f, {random_array({32}, 10)});
  // The weights are bytes: passed through unchanged, no gradient.
  const Fn g = [](const std::vector<Tensor>& in) { return ops::quantized_matmul(in[0], in[1], "q5_0"); };
  EXPECT_GRADIENTS_MATCH(g, {random_array({2, 32}, 11), wq.array()});
}

TEST(QuantOps, SecondDerivativeThroughTheGradient) {
  const Tensor wq = ops::quantize_weights(random_f32({4, 32}, 12), "q8_0");
  // d/dx of sum((x W^T)^2) is 2 (x W^T) W; its derivative again is checked against finite differences.
  const Fn grad_fn = [wq](const std::vector<Tensor>& in) {
    const auto loss = [wq](const std::vector<Tensor>& a) {
      const Tensor y = ops::quantized_matmul(a[0], wq, "q8_0");
      return ops::sum(y * y);
    };
    return grad(loss)({in[0]})[0];
  };
  EXPECT_GRADIENTS_MATCH(grad_fn, {random_array({2, 32}, 13)});
}

TEST_F(ExactQuantOps, DecompositionAgreesWithTheOp) {
  const Tensor wq = ops::quantize_weights(random_f32({3, 256}, 14), "q3_k");
  const Array x = random_f32({2, 256}, 15);
  const ir::OpDef& def = ir::OpRegistry::instance().get("quantized_matmul");
  ASSERT_TRUE(def.decompose);
  const std::vector<ir::Value> parts = def.decompose({Tensor(x), wq}, ir::Attrs{{"type", std::string("q3_k")}});
  expect_close(Tensor(parts[0]), ops::quantized_matmul(Tensor(x), wq, "q3_k").array().to_f64(), 1e-5, 1e-5);
}

TEST_F(ExactQuantOps, SixteenBitActivationsIntoAnF32Product) {
  // output_dtype f32 on bf16 / f16 activations: the exact product of the rounded x, not rounded again.
  const int64_t m = 3, n = 4, k = 64;
  const Tensor wq = ops::quantize_weights(random_f32({n, k}, 16, 0.3), "q8_0");
  const std::vector<double> wd = ops::dequantize(wq, "q8_0").array().to_f64();
  for (DType half : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(half));
    const Array x = random_f32({m, k}, 17).astype(half);
    const Tensor y = ops::quantized_matmul(Tensor(x), wq, "q8_0", DType::f32);
    EXPECT_EQ(y.dtype(), DType::f32);
    expect_shape(y, {m, n});
    expect_close(y, linear(x.to_f64(), wd, m, n, k), 1e-6, 1e-6);
    // The decomposition widens x first and agrees.
    const ir::OpDef& def = ir::OpRegistry::instance().get("quantized_matmul");
    const std::vector<ir::Value> parts = def.decompose(
        {Tensor(x), wq}, ir::Attrs{{"type", std::string("q8_0")}, {"output_dtype", std::string("f32")}});
    EXPECT_EQ(parts[0].dtype(), DType::f32);
    expect_close(Tensor(parts[0]), y.array().to_f64(), 1e-5, 1e-5);
  }
  // The same dtype as x is the plain op (no attribute).
  const Tensor same = ops::quantized_matmul(Tensor(random_f32({2, k}, 18)), wq, "q8_0", DType::f32);
  EXPECT_FALSE(same.value().node()->attrs().has("output_dtype"));
}

TEST(QuantOps, OutputDtypeErrors) {
  const Tensor wq = ops::quantize_weights(random_f32({4, 32}, 19), "q8_0");
  const Tensor x = Tensor(Array::zeros(DType::bf16, {2, 32}));
  EXPECT_TESSERA_ERROR(ops::quantized_matmul(x, wq, "q8_0", DType::i32), "quantized_matmul", "bf16[2, 32]",
                       "output_dtype must be floating", "i32");
  EXPECT_TESSERA_ERROR(ir::make_node1("quantized_matmul", {x, wq},
                                      ir::Attrs{{"type", std::string("q8_0")}, {"output_dtype", std::string("f33")}}),
                       "quantized_matmul", "output_dtype 'f33' is not a dtype");
}

TEST(QuantOps, GradientThroughAWiderOutput) {
  // f32 activations into an f64 product: the cotangent is computed in f64 and comes back as f32. The
  // product is linear in x, so a coarse step (exact in f32) gives exact differences.
  const Tensor wq = ops::quantize_weights(random_f32({3, 32}, 20), "q8_0");
  const Fn f = [wq](const std::vector<Tensor>& in) { return ops::quantized_matmul(in[0], wq, "q8_0", DType::f64); };
  EXPECT_GRADIENTS_MATCH(f, {random_array({2, 32}, 21, -1, 1, DType::f32)},
                         tessera::testing::GradCheckOptions{.eps = 0.25, .atol = 1e-5, .rtol = 1e-5});
  const Tensor x(random_array({2, 32}, 22, -1, 1, DType::f32));
  const auto loss = [wq](const std::vector<Tensor>& a) { return ops::sum(ops::quantized_matmul(a[0], wq, "q8_0", DType::f64)); };
  EXPECT_EQ(grad(loss)({x})[0].dtype(), DType::f32);
}
