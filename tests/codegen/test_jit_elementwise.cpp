// End-to-end: elementwise ops compiled by the JIT against the reference backend, for every op
// can_generate accepts, several dtypes and broadcasting shapes.
#include <limits>

#include "codegen_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Fn = std::function<Tensor(const Tensor&)>;
using Fn2 = std::function<Tensor(const Tensor&, const Tensor&)>;

// Float inputs with the awkward values: NaN, infinities, signed zeros, large and tiny magnitudes.
Array special_floats(DType dt) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {std::nan(""), inf, -inf, 0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30,  88.0,  -88.0, 0.5,
                           -0.5,         2.5, -2.5, 3.5, 1.0,  -1.0,  20.0,   30.0, -700.0, 700.0, 0.1,   3.14159};
  Array extra = random_of(DType::f64, {40}, 7, -6, 6);
  for (double x : extra.to_f64()) v.push_back(x);
  return Array::from_vector(v, {static_cast<int64_t>(v.size())}).astype(dt);
}

Array special_ints(DType dt) {
  std::vector<double> v;
  switch (dt) {
    case DType::i8:
      v = {-128, 127, -1, 0, 1, 100, -100, 64, -64, 11};
      break;
    case DType::u8:
      v = {0, 1, 255, 128, 127, 200, 16, 3};
      break;
    case DType::i32:
      v = {-2147483648.0, 2147483647.0, -1, 0, 1, 65536, -65536, 46341, 12345};
      break;
    case DType::i64:
      v = {-9.2e18, 9.2e18, -1, 0, 1, 4294967296.0, -3037000500.0, 3037000500.0};
      break;
    default:
      v = {0, 1, 1, 0, 1};
  }
  return Array::from_vector(v, {static_cast<int64_t>(v.size())}).astype(dt);
}

struct UnaryCase {
  std::string name;
  Fn fn;
};

std::vector<UnaryCase> float_unaries() {
  return {
      {"exp", [](const Tensor& x) { return ops::exp(x); }},
      {"expm1", [](const Tensor& x) { return ops::expm1(x); }},
      {"log", [](const Tensor& x) { return ops::log(x); }},
      {"log1p", [](const Tensor& x) { return ops::log1p(x); }},
      {"sqrt", [](const Tensor& x) { return ops::sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return ops::rsqrt(x); }},
      {"reciprocal", [](const Tensor& x) { return ops::reciprocal(x); }},
      {"sin", [](const Tensor& x) { return ops::sin(x); }},
      {"cos", [](const Tensor& x) { return ops::cos(x); }},
      {"tanh", [](const Tensor& x) { return ops::tanh(x); }},
      {"erf", [](const Tensor& x) { return ops::erf(x); }},
      {"sigmoid", [](const Tensor& x) { return ops::sigmoid(x); }},
      {"leaky_relu", [](const Tensor& x) { return ops::leaky_relu(x, 0.03); }},
      {"elu", [](const Tensor& x) { return ops::elu(x, 1.3); }},
      {"gelu", [](const Tensor& x) { return ops::gelu(x, false); }},
      {"gelu_tanh", [](const Tensor& x) { return ops::gelu(x, true); }},
      {"silu", [](const Tensor& x) { return ops::silu(x); }},
      {"softplus", [](const Tensor& x) { return ops::softplus(x, 1.5, 10.0); }},
      {"floor", [](const Tensor& x) { return ops::floor(x); }},
      {"ceil", [](const Tensor& x) { return ops::ceil(x); }},
      {"round", [](const Tensor& x) { return ops::round(x); }},
  };
}

std::vector<UnaryCase> numeric_unaries() {
  return {
      {"neg", [](const Tensor& x) { return ops::neg(x); }},
      {"abs", [](const Tensor& x) { return ops::abs(x); }},
      {"sign", [](const Tensor& x) { return ops::sign(x); }},
      {"square", [](const Tensor& x) { return ops::square(x); }},
      {"relu", [](const Tensor& x) { return ops::relu(x); }},
  };
}

std::vector<UnaryCase> any_unaries() {
  return {
      {"logical_not", [](const Tensor& x) { return ops::logical_not(x); }},
      {"isnan", [](const Tensor& x) { return ops::isnan(x); }},
      {"isinf", [](const Tensor& x) { return ops::isinf(x); }},
  };
}

// All cases on one input in one graph: one compiler run, one cluster per case.
void check_unaries(const std::vector<UnaryCase>& cases, const Array& x) {
  SCOPED_TRACE(std::string("input ") + dtype_name(x.dtype()));
  auto clusters = check_against_reference(
      [&](const std::vector<Tensor>& in) {
        std::vector<Tensor> outs;
        for (const auto& c : cases) outs.push_back(c.fn(in[0]));
        return outs;
      },
      {x}, 1e-6, 0);
  EXPECT_EQ(clusters.size(), cases.size());
}

}  // namespace

TEST(JitElementwise, FloatUnaryOpsMatchReference) {
  for (DType dt : {DType::f32, DType::f64}) check_unaries(float_unaries(), special_floats(dt));
}

TEST(JitElementwise, NumericUnaryOpsMatchReferenceOnAllDtypes) {
  std::vector<UnaryCase> both = numeric_unaries();
  for (const auto& c : any_unaries()) both.push_back(c);
  for (DType dt : {DType::f32, DType::f64}) check_unaries(both, special_floats(dt));
  for (DType dt : {DType::i8, DType::u8, DType::i32, DType::i64}) check_unaries(both, special_ints(dt));
  check_unaries(any_unaries(), special_ints(DType::boolean));
}

TEST(JitElementwise, CastsSaturateAndRoundLikeConvertElement) {
  const DType all[] = {DType::f32, DType::f64, DType::i8, DType::u8, DType::i32, DType::i64, DType::boolean};
  for (DType from : all) {
    std::vector<UnaryCase> casts;
    for (DType to : all) {
      if (to != from) casts.push_back({dtype_name(to), [to](const Tensor& t) { return ops::cast(t, to); }});
    }
    check_unaries(casts, is_floating(from) ? special_floats(from) : special_ints(from));
  }
}

TEST(JitElementwise, BinaryOpsPromoteAndBroadcast) {
  const std::vector<std::pair<std::string, Fn2>> ops_list = {
      {"add", [](const Tensor& a, const Tensor& b) { return ops::add(a, b); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return ops::sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return ops::mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return ops::div(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return ops::pow(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return ops::maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return ops::minimum(a, b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return ops::eq(a, b); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ops::ne(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return ops::lt(a, b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return ops::le(a, b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return ops::gt(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ops::ge(a, b); }},
      {"logical_and", [](const Tensor& a, const Tensor& b) { return ops::logical_and(a, b); }},
      {"logical_or", [](const Tensor& a, const Tensor& b) { return ops::logical_or(a, b); }},
  };
  const std::vector<std::pair<DType, DType>> pairs = {{DType::f32, DType::f32},     {DType::f64, DType::f32},
                                                      {DType::i32, DType::f32},     {DType::i8, DType::u8},
                                                      {DType::i64, DType::i32},     {DType::u8, DType::u8},
                                                      {DType::i8, DType::i8},       {DType::boolean, DType::boolean},
                                                      {DType::boolean, DType::i32}, {DType::f64, DType::f64}};
  const std::vector<std::pair<Shape, Shape>> shapes = {{{3, 1, 4}, {5, 4}}, {{7}, {}}, {{2, 3}, {2, 3}}};
  // Every (op, dtype pair, shape pair) in one graph: one compiler run for the lot.
  std::vector<Array> inputs;
  uint64_t seed = 1;
  for (const auto& [da, db] : pairs) {
    for (const auto& [sa, sb] : shapes) {
      inputs.push_back(random_of(da, sa, seed++, is_floating(da) ? -3 : -120, is_floating(da) ? 3 : 120));
      inputs.push_back(random_of(db, sb, seed++, is_floating(db) ? -3 : -120, is_floating(db) ? 3 : 120));
    }
  }
  auto clusters = check_against_reference(
      [&](const std::vector<Tensor>& in) {
        std::vector<Tensor> outs;
        for (size_t i = 0; i < in.size(); i += 2) {
          for (const auto& op : ops_list) outs.push_back(op.second(in[i], in[i + 1]));
        }
        return outs;
      },
      inputs, 1e-6, 0);
  EXPECT_EQ(clusters.size(), ops_list.size() * inputs.size() / 2);
}

TEST(JitElementwise, IntegerArithmeticWrapsLikeTheReference) {
  for (DType dt : {DType::i8, DType::u8, DType::i32, DType::i64}) {
    const Array x = special_ints(dt);
    check_against_reference(
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{in[0] + in[0], in[0] - ops::flip(in[0], {0}), in[0] * in[0], ops::neg(in[0])};
        },
        {x});
  }
}

TEST(JitElementwise, NanPropagatesThroughMaximumAndMinimum) {
  const Array a = special_floats(DType::f32);
  std::vector<double> reversed = a.to_f64();
  std::reverse(reversed.begin(), reversed.end());
  const Array b = Array::from_vector(reversed, a.shape()).astype(DType::f32);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::maximum(in[0], in[1]), ops::minimum(in[0], in[1])};
      },
      {a, b});
}

TEST(JitElementwise, WhereAndClampOnSeveralDtypes) {
  for (DType dt : {DType::f32, DType::f64, DType::i32, DType::u8, DType::i8, DType::i64}) {
    SCOPED_TRACE(dtype_name(dt));
    const Array c = random_of(DType::boolean, {4, 1}, 3);
    const Array a = random_of(dt, {4, 6}, 4, 0, 100), b = random_of(dt, {6}, 5, 0, 100);
    check_against_reference(
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{ops::where(in[0], in[1], in[2]), ops::clamp(in[1], 10.5, 70.2),
                                     ops::clamp(in[2], std::nullopt, 20.0), ops::clamp(in[1], -1e30, std::nullopt)};
        },
        {c, a, b});
  }
}

TEST(JitElementwise, ChainsFuseIntoOneKernelWithScalarConstantsInlined) {
  const Array x = random_of(DType::f32, {64, 33}, 11), b = random_of(DType::f32, {33}, 12);
  auto clusters = check_against_reference(
      [](const std::vector<Tensor>& in) {
        const Tensor y = ops::relu(in[0] * 1.5 + in[1]);
        return std::vector<Tensor>{ops::tanh(y) - ops::sigmoid(y) * 0.25};
      },
      {x, b});
  ASSERT_EQ(clusters.size(), 1u);
  const auto kernel = lower::build_loop_kernel(clusters[0]);
  int used = 0;
  for (bool u : kernel.input_used) used += u;
  EXPECT_EQ(used, 2) << lower::print_kernel(kernel);  // x and b; the scalars are literals
}

TEST(JitElementwise, ViewsAreIndexMath) {
  const Array x = random_of(DType::f32, {4, 5, 6}, 21), y = random_of(DType::f32, {6, 5, 4}, 22);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        const Tensor t = ops::permute(in[1], {2, 1, 0});  // transposed read
        const Tensor s = ops::slice(in[0], 1, 4, 0, -2);  // reversed strided slice
        const Tensor f = ops::flip(in[0], {0, 2});
        const Tensor r = ops::reshape(ops::exp(in[0]), {20, 6});  // reshape merging axes after compute
        return std::vector<Tensor>{in[0] + t, ops::sin(s), f * 2.0, r + ops::reshape(in[1], {20, 6}),
                                   ops::broadcast_to(ops::slice(in[0], 2, 0, 1, 1), {3, 4, 5, 6})};
      },
      {x, y});
}

TEST(JitElementwise, EmptyTensorsRunNothing) {
  const Array x = random_of(DType::f32, {0, 5}, 1), b = random_of(DType::f32, {5}, 2);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::exp(in[0]) + in[1], in[0] * 2.0};
      },
      {x, b});
}

TEST(JitElementwise, LargeBroadcastSplitsOverThreads) {
  const Array x = random_of(DType::f32, {301, 1023}, 31), b = random_of(DType::f32, {1023}, 32),
              c = random_of(DType::f32, {301, 1}, 33);
  check_against_reference(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0] * in[2] + in[1])}; }, {x, b, c});
}

TEST(JitElementwise, FullAndScalarGeneratorsAreLiterals) {
  const Array x = random_of(DType::f32, {3, 4}, 41);
  auto clusters = check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::where(ops::gt(in[0], ops::zeros_like(in[0])), in[0], ops::full({3, 4}, 7.5)),
                                   ops::ones({2, 2}, DType::i32)};
      },
      {x});
  EXPECT_GE(clusters.size(), 1u);
}

// arange inside a kernel: its values are computed from the element's index (Op::Index), never loaded,
// in every dtype, with fractional and negative steps, broadcast across rows and reversed by a flip.
TEST(JitElementwise, ArangeIsComputedInTheKernel) {
  struct Case {
    double start, stop, step;
    DType dtype;
  };
  const std::vector<Case> cases = {{0, 4100, 1, DType::i64},         {-3, 4097, 1, DType::i32},
                                   {0.5, 2050, 0.5, DType::f32},     {5000, 900, -1, DType::f32},
                                   {0, 300, 1, DType::u8},           {-200, 4000, 1, DType::i8},
                                   {0, 1.1e5, 25.5, DType::f32},     {1e15, 1.00000000001e15, 1, DType::f64},
                                   {16777000, 16781100, 1, DType::f32}};
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("arange({}, {}, {}) {}", c.start, c.stop, c.step, dtype_name(c.dtype)));
    const auto broadcast = check_against_reference(
        [&](const std::vector<Tensor>& in) {
          const Tensor a = ops::arange(c.start, c.stop, c.step, c.dtype);
          return std::vector<Tensor>{ops::add(ops::cast(ops::reshape(a, {1, a.dim(0)}), DType::f64), in[0])};
        },
        {Array::zeros(DType::f64, {3, 1})});
    ASSERT_EQ(broadcast.size(), 1u);
    EXPECT_EQ(broadcast[0].inputs.size(), 1u);  // x only: arange is no buffer
    const auto flipped = check_against_reference(
        [&](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{ops::flip(ops::arange(c.start, c.stop, c.step, c.dtype), {0}) + ops::cast(in[0], c.dtype)};
        },
        {Array::zeros(DType::f64, {1})});
    ASSERT_EQ(flipped.size(), 1u);
  }
}
