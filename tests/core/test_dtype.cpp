// Dtype properties and the complete promotion table. The table below is the documentation of
// promote_types: one row per left operand, one column per right operand.
#include <map>

#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
constexpr DType f32 = DType::f32, f64 = DType::f64, f16 = DType::f16, bf16 = DType::bf16, i8 = DType::i8,
                i32 = DType::i32, i64 = DType::i64, u8 = DType::u8, b = DType::boolean;
}

TEST(DType, NamesSizesAndCategories) {
  const std::map<DType, std::tuple<const char*, size_t, bool, bool, bool>> expected{
      // name, size, floating, integral, signed
      {f32, {"f32", 4, true, false, true}},  {f64, {"f64", 8, true, false, true}},
      {f16, {"f16", 2, true, false, true}},  {bf16, {"bf16", 2, true, false, true}},
      {i8, {"i8", 1, false, true, true}},    {i32, {"i32", 4, false, true, true}},
      {i64, {"i64", 8, false, true, true}},  {u8, {"u8", 1, false, true, false}},
      {b, {"bool", 1, false, false, false}},
  };
  ASSERT_EQ(std::size(kAllDTypes), expected.size());
  for (DType dt : kAllDTypes) {
    const auto& [name, size, floating, integral, is_signed_] = expected.at(dt);
    EXPECT_STREQ(dtype_name(dt), name);
    EXPECT_EQ(dtype_size(dt), size) << name;
    EXPECT_EQ(is_floating(dt), floating) << name;
    EXPECT_EQ(is_integral(dt), integral) << name;
    EXPECT_EQ(is_signed(dt), is_signed_) << name;
    EXPECT_EQ(parse_dtype(name), dt);
  }
  EXPECT_EQ(sizeof(dtype_cpp<DType::bf16>::type), 2u);
  static_assert(dtype_of<int8_t>() == DType::i8 && dtype_of<bool>() == DType::boolean);
  static_assert(std::is_same_v<compute_t<f16_t>, float> && std::is_same_v<compute_t<bf16_t>, float>);
  static_assert(std::is_same_v<compute_t<int8_t>, int8_t> && std::is_same_v<compute_t<double>, double>);
}

TEST(DType, ParseRejectsUnknownNames) {
  EXPECT_TESSERA_ERROR(parse_dtype("float32"), "unknown dtype 'float32'", "f32", "bool");
  EXPECT_TESSERA_ERROR(parse_dtype(""), "unknown dtype");
  EXPECT_TESSERA_ERROR(parse_dtype("F32"), "unknown dtype 'F32'");
}

TEST(DType, DispatchFloatingRejectsOthersNamingTheCaller) {
  EXPECT_EQ(dispatch_floating(DType::bf16, "caller", [](auto tag) { return sizeof(tag); }), 2u);
  EXPECT_TESSERA_ERROR(dispatch_floating(DType::i32, "my_op", [](auto tag) { return sizeof(tag); }), "my_op",
                       "floating", "i32");
}

TEST(DType, PromotionTableEveryPair) {
  // Rules: bool is the weakest; integer with integer widens to the wider (u8 with i8 -> i32, the
  // smallest signed type holding both ranges); any float beats any integer; f16 with bf16 -> f32.
  const std::vector<DType> order{f32, f64, f16, bf16, i8, i32, i64, u8, b};
  const std::vector<std::vector<DType>> table{
      //          f32  f64  f16   bf16  i8    i32   i64   u8    bool
      /* f32  */ {f32, f64, f32, f32, f32, f32, f32, f32, f32},
      /* f64  */ {f64, f64, f64, f64, f64, f64, f64, f64, f64},
      /* f16  */ {f32, f64, f16, f32, f16, f16, f16, f16, f16},
      /* bf16 */ {f32, f64, f32, bf16, bf16, bf16, bf16, bf16, bf16},
      /* i8   */ {f32, f64, f16, bf16, i8, i32, i64, i32, i8},
      /* i32  */ {f32, f64, f16, bf16, i32, i32, i64, i32, i32},
      /* i64  */ {f32, f64, f16, bf16, i64, i64, i64, i64, i64},
      /* u8   */ {f32, f64, f16, bf16, i32, i32, i64, u8, u8},
      /* bool */ {f32, f64, f16, bf16, i8, i32, i64, u8, b},
  };
  for (size_t r = 0; r < order.size(); ++r) {
    for (size_t c = 0; c < order.size(); ++c) {
      EXPECT_EQ(promote_types(order[r], order[c]), table[r][c])
          << dtype_name(order[r]) << " with " << dtype_name(order[c]) << " gives "
          << dtype_name(promote_types(order[r], order[c])) << ", expected " << dtype_name(table[r][c]);
    }
  }
}

TEST(DType, PromotionIsSymmetricAndIdempotent) {
  for (DType x : kAllDTypes) {
    EXPECT_EQ(promote_types(x, x), x);
    for (DType y : kAllDTypes) EXPECT_EQ(promote_types(x, y), promote_types(y, x));
  }
}
