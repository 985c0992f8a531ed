// Shape helpers: element counts, strides, axis normalisation and broadcasting, with their errors.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(ShapeHelpers, NumelStrAndStrides) {
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_numel({2, 0, 4}), 0);
  EXPECT_EQ(shape_str({}), "[]");
  EXPECT_EQ(shape_str({7}), "[7]");
  EXPECT_EQ(shape_str({2, 3}), "[2, 3]");
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), Strides{});
  // Zero-size axes still get distinct, valid strides.
  EXPECT_EQ(contiguous_strides({2, 0, 3}), (Strides{3, 3, 1}));
  EXPECT_EQ(contiguous_strides({1, 1, 1, 1, 1, 5}), (Strides{5, 5, 5, 5, 5, 1}));
}

TEST(ShapeHelpers, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(0, 3, "op"), 0);
  EXPECT_EQ(normalize_axis(-1, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(-3, 3, "op"), 0);
  EXPECT_TESSERA_ERROR(normalize_axis(3, 3, "my_op"), "my_op", "axis 3", "rank 3", "-3..2");
  EXPECT_TESSERA_ERROR(normalize_axis(-4, 3, "my_op"), "my_op", "axis -4");
  EXPECT_TESSERA_ERROR(normalize_axis(0, 0, "scalar_op"), "scalar_op", "rank 0");
}

TEST(ShapeHelpers, NormalizeAxes) {
  EXPECT_EQ(normalize_axes({}, 3, "op"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(normalize_axes({}, 3, "op", false), std::vector<int64_t>{});
  EXPECT_EQ(normalize_axes({-1, 0}, 3, "op"), (std::vector<int64_t>{0, 2}));
  EXPECT_TESSERA_ERROR(normalize_axes({1, -2}, 3, "sum"), "sum", "repeated axis");
  EXPECT_TESSERA_ERROR(normalize_axes({5}, 3, "sum"), "sum", "axis 5");
}

TEST(ShapeHelpers, BroadcastShapes) {
  EXPECT_EQ(broadcast_shapes({2, 3}, {3}, "op"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({}, {4, 1}, "op"), (Shape{4, 1}));
  EXPECT_EQ(broadcast_shapes({2, 1, 4}, {3, 1}, "op"), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({1, 2, 1, 3, 1}, {5, 1, 4, 1, 6}, "op"), (Shape{5, 2, 4, 3, 6}));
  EXPECT_EQ(broadcast_shapes({0, 3}, {1, 3}, "op"), (Shape{0, 3}));  // 1 stretches to 0
  EXPECT_EQ(broadcast_shapes({0}, {0}, "op"), (Shape{0}));
  EXPECT_TESSERA_ERROR(broadcast_shapes({2, 3}, {4}, "add"), "add", "[2, 3]", "[4]", "do not broadcast",
                       "dimension 1 from the right", "3 vs 4");
  EXPECT_TESSERA_ERROR(broadcast_shapes({0}, {2}, "mul"), "mul", "[0]", "[2]");
  EXPECT_TESSERA_ERROR(broadcast_shapes({2, 5, 7}, {3, 1, 7}, "op"), "dimension 3 from the right");
}

TEST(ShapeHelpers, StridesThatOverflowAreRefused) {
  // Strides multiply the non-zero dimensions, so a zero does not make huge neighbours harmless.
  EXPECT_TESSERA_ERROR(contiguous_strides({0, int64_t{1} << 62, int64_t{1} << 62}), "strides overflow");
  EXPECT_EQ(contiguous_strides({int64_t{1} << 31, int64_t{1} << 31}), (Strides{int64_t{1} << 31, 1}));
}
