// Array views: which operations alias the storage (no copy) and which must copy, the strides they
// produce, and that every view reads back the logically expected elements.
#include <numeric>

#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
// 0, 1, 2, ... as f32 in `shape`.
Array iota(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  std::iota(v.begin(), v.end(), 0.0f);
  return Array::from_vector(v, shape);
}
std::vector<double> values(const Array& a) {
  return a.to_f64();
}
}  // namespace

TEST(ArrayViews, ReshapeOfContiguousIsAView) {
  const Array a = iota({2, 3, 4});
  const Array r = a.reshape({6, 4});
  EXPECT_TRUE(r.shares_storage_with(a));
  EXPECT_EQ(r.shape(), (Shape{6, 4}));
  EXPECT_EQ(r.strides(), (Strides{4, 1}));
  EXPECT_EQ(values(r), values(a));
  const Array inferred = a.reshape({-1, 2});
  EXPECT_EQ(inferred.shape(), (Shape{12, 2}));
  EXPECT_TRUE(inferred.shares_storage_with(a));
  EXPECT_EQ(a.reshape({4, -1, 3}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(a.reshape({24}).strides(), (Strides{1}));
  EXPECT_EQ(a.reshape({1, 24, 1}).shape(), (Shape{1, 24, 1}));
}

TEST(ArrayViews, ReshapeOfTransposedCopiesWhenItMust) {
  const Array a = iota({2, 3});       // [[0 1 2] [3 4 5]]
  const Array t = a.transpose(0, 1);  // [[0 3] [1 4] [2 5]], strides [1, 3]
  EXPECT_EQ(t.strides(), (Strides{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  const Array flat = t.reshape({6});
  EXPECT_FALSE(flat.shares_storage_with(a));  // no strides can express this order
  EXPECT_TRUE(flat.is_contiguous());
  EXPECT_EQ(values(flat), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // Adding or removing size-1 axes, or splitting one axis, works on the transposed strides.
  const Array unit = t.reshape({3, 1, 2});
  EXPECT_TRUE(unit.shares_storage_with(a));
  EXPECT_EQ(values(unit), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Strides s;
  EXPECT_TRUE(t.reshape_strides({3, 2, 1}, &s));
  EXPECT_EQ(s[0], 1);
  EXPECT_EQ(s[1], 3);
  EXPECT_FALSE(t.reshape_strides({2, 3}, &s));
  EXPECT_EQ(values(t.reshape({2, 3})), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(ArrayViews, ReshapeSplitsAndMergesStridedRuns) {
  // The last axis of [2, 6] taken with step 2: [2, 3] with strides [6, 2].
  const Array a = iota({2, 6});
  const Array s = a.slice(1, 0, 6, 2);
  EXPECT_EQ(s.strides(), (Strides{6, 2}));
  EXPECT_EQ(values(s), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_TRUE(s.reshape({2, 3, 1}).shares_storage_with(a));
  EXPECT_TRUE(s.reshape({1, 2, 3}).shares_storage_with(a));
  // Row stride 6 = 3 columns x stride 2, so the two axes merge into one run of stride 2: a view.
  const Array merged = s.reshape({6});
  EXPECT_TRUE(merged.shares_storage_with(a));
  EXPECT_EQ(merged.strides(), (Strides{2}));
  EXPECT_EQ(values(merged), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  // With 7 columns the rows are 7 apart, not 6: no single stride exists, so reshape copies.
  const Array c = iota({2, 7});
  const Array gapped = c.slice(1, 0, 6, 2).reshape({6});
  EXPECT_FALSE(gapped.shares_storage_with(c));
  EXPECT_EQ(values(gapped), (std::vector<double>{0, 2, 4, 7, 9, 11}));
  // A run that is contiguous in itself splits into a view: [4, 6] -> [4, 2, 3].
  const Array b = iota({4, 6});
  const Array split = b.reshape({4, 2, 3});
  EXPECT_TRUE(split.shares_storage_with(b));
  EXPECT_EQ(split.strides(), (Strides{6, 3, 1}));
  // Rows 1..3 of [4, 6] are contiguous as a block: merging them into [18] is a view with an offset.
  const Array rows = b.slice(0, 1, 4);
  const Array rows_flat = rows.reshape({18});
  EXPECT_TRUE(rows_flat.shares_storage_with(b));
  EXPECT_EQ(rows_flat.offset(), 6);
  EXPECT_EQ(values(rows_flat)[0], 6.0);
}

TEST(ArrayViews, ReshapeOfBroadcastKeepsZeroStrides) {
  const Array row = iota({3});
  const Array b = row.broadcast_to({4, 3});
  EXPECT_EQ(b.strides(), (Strides{0, 1}));
  const Array split = b.reshape({2, 2, 3});
  EXPECT_TRUE(split.shares_storage_with(row));
  EXPECT_EQ(split.strides(), (Strides{0, 0, 1}));
  const Array flat = b.reshape({12});  // a repeating pattern has no single stride: copy
  EXPECT_FALSE(flat.shares_storage_with(row));
  EXPECT_EQ(values(flat), (std::vector<double>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
}

TEST(ArrayViews, ReshapeErrors) {
  const Array a = iota({2, 3});
  EXPECT_TESSERA_ERROR(a.reshape({4, 2}), "reshape", "[2, 3]", "[4, 2]", "6", "8");
  EXPECT_TESSERA_ERROR(a.reshape({-1, -1}), "reshape", "more than one -1");
  EXPECT_TESSERA_ERROR(a.reshape({-1, 4}), "reshape", "cannot infer");
  EXPECT_TESSERA_ERROR(a.reshape({-2, -3}), "reshape", "negative");
  EXPECT_TESSERA_ERROR(Array::zeros(DType::f32, {0, 3}).reshape({-1, 0}), "reshape", "cannot infer");
  EXPECT_EQ(Array::zeros(DType::f32, {0, 3}).reshape({3, 0, 5}).shape(), (Shape{3, 0, 5}));
}

TEST(ArrayViews, PermuteAndTranspose) {
  const Array a = iota({2, 3, 4});
  const Array p = a.permute({2, 0, 1});
  EXPECT_TRUE(p.shares_storage_with(a));
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Strides{1, 12, 4}));
  // Element [k, i, j] of p is element [i, j, k] of a = 12 i + 4 j + k.
  const auto v = values(p);
  for (int64_t k = 0; k < 4; ++k) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(v[static_cast<size_t>(k * 6 + i * 3 + j)], 12 * i + 4 * j + k);
    }
  }
  EXPECT_EQ(a.permute({-1, 0, 1}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(a.transpose(-1, 0).shape(), (Shape{4, 3, 2}));
  EXPECT_TESSERA_ERROR(a.permute({0, 1}), "permute", "2 axes", "rank 3");
  EXPECT_TESSERA_ERROR(a.permute({0, 1, 1}), "permute", "repeated");
  EXPECT_TESSERA_ERROR(a.permute({0, 1, 3}), "permute", "axis 3", "rank 3");
  EXPECT_TESSERA_ERROR(a.transpose(0, 5), "transpose", "axis 5");
}

TEST(ArrayViews, BroadcastToUsesStrideZero) {
  const Array col = iota({3, 1});
  const Array b = col.broadcast_to({2, 3, 4});
  EXPECT_TRUE(b.shares_storage_with(col));
  EXPECT_EQ(b.strides(), (Strides{0, 1, 0}));
  const auto v = values(b);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<double>((i / 4) % 3)) << i;
  EXPECT_FALSE(b.is_contiguous());
  EXPECT_EQ(Array::scalar(5).broadcast_to({2, 2}).to_f64(), (std::vector<double>{5, 5, 5, 5}));
  EXPECT_EQ(iota({1}).broadcast_to({0}).numel(), 0);
  EXPECT_TESSERA_ERROR(col.broadcast_to({3, 2, 4}), "broadcast_to", "[3, 1]", "[3, 2, 4]");
  EXPECT_TESSERA_ERROR(col.broadcast_to({4}), "broadcast_to", "lower rank");
}

TEST(ArrayViews, SliceWithPositiveAndNegativeSteps) {
  const Array a = iota({6});
  EXPECT_EQ(values(a.slice(0, 1, 5, 2)), (std::vector<double>{1, 3}));
  const Array rev = a.slice(0, -1, -7, -1);  // Python a[-1:-7:-1]: the whole array reversed
  EXPECT_TRUE(rev.shares_storage_with(a));
  EXPECT_EQ(rev.strides(), (Strides{-1}));
  EXPECT_EQ(rev.offset(), 5);
  EXPECT_EQ(values(rev), (std::vector<double>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(values(a.slice(0, 5, 0, -2)), (std::vector<double>{5, 3, 1}));    // a[5:0:-2]
  EXPECT_EQ(values(a.slice(0, 100, -100, -3)), (std::vector<double>{5, 2}));  // clamped like Python
  EXPECT_EQ(values(a.slice(0, -100, 100)), values(a));
  EXPECT_EQ(values(a.slice(0, -2, 6)), (std::vector<double>{4, 5}));
  EXPECT_EQ(a.slice(0, 4, 2).numel(), 0);       // a[4:2] is empty
  EXPECT_EQ(a.slice(0, 2, 4, -1).numel(), 0);   // a[2:4:-1] is empty
  EXPECT_EQ(a.slice(0, 4, -1, -1).numel(), 0);  // a[4:-1:-1]: stop -1 is the last element
  // Reversing twice restores the order; reversing a 2-D array's rows keeps the columns.
  EXPECT_EQ(values(rev.slice(0, -1, -7, -1)), values(a));
  const Array m = iota({3, 2});
  EXPECT_EQ(values(m.slice(0, 2, -4, -1)), (std::vector<double>{4, 5, 2, 3, 0, 1}));
  EXPECT_EQ(values(m.slice(-1, 1, -3, -1)), (std::vector<double>{1, 0, 3, 2, 5, 4}));
  EXPECT_EQ(values(a.slice(0, INT64_MIN, INT64_MAX)), values(a));
  EXPECT_TESSERA_ERROR(a.slice(0, 0, 3, 0), "slice", "step");
  EXPECT_TESSERA_ERROR(a.slice(1, 0, 3), "slice", "axis 1", "rank 1");
}

// Huge steps take one element (Python: a[0:6:sys.maxsize] == [a[0]]); the element count must be
// computed without overflowing int64 (checked under -DTESSERA_SANITIZE=undefined).
TEST(ArrayViews, SliceWithHugeStepTakesOneElement) {
  const Array a = iota({6});
  EXPECT_EQ(values(a.slice(0, 0, 6, INT64_MAX)), (std::vector<double>{0}));
  EXPECT_EQ(values(a.slice(0, 5, -7, -INT64_MAX)), (std::vector<double>{5}));
}

TEST(ArrayViews, SqueezeAndUnsqueeze) {
  const Array a = iota({1, 3, 1, 2});
  EXPECT_EQ(a.squeeze().shape(), (Shape{3, 2}));
  EXPECT_EQ(a.squeeze({0}).shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(a.squeeze({-2}).shape(), (Shape{1, 3, 2}));
  EXPECT_TRUE(a.squeeze().shares_storage_with(a));
  EXPECT_EQ(values(a.squeeze()), values(a));
  EXPECT_TESSERA_ERROR(a.squeeze({1}), "squeeze", "axis 1", "size 3", "expected 1");
  EXPECT_TESSERA_ERROR(a.squeeze({4}), "squeeze", "axis 4");
  const Array b = iota({2, 3});
  EXPECT_EQ(b.unsqueeze(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(b.unsqueeze(1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(b.unsqueeze(2).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(b.unsqueeze(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(b.unsqueeze(-3).shape(), (Shape{1, 2, 3}));
  EXPECT_TRUE(b.unsqueeze(1).is_contiguous());
  EXPECT_TRUE(b.unsqueeze(1).shares_storage_with(b));
  EXPECT_TESSERA_ERROR(b.unsqueeze(3), "unsqueeze", "axis 3");
  EXPECT_EQ(Array::scalar(1).unsqueeze(0).shape(), (Shape{1}));
  // unsqueeze of a transposed view keeps reading the right elements.
  EXPECT_EQ(values(b.transpose(0, 1).unsqueeze(1)), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(ArrayViews, ContiguousAndCopy) {
  const Array a = iota({2, 3});
  const Array same = a.contiguous();
  EXPECT_TRUE(same.shares_storage_with(a));  // already packed: no copy
  EXPECT_EQ(same.offset(), a.offset());
  const Array t = a.transpose(0, 1).contiguous();
  EXPECT_FALSE(t.shares_storage_with(a));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.strides(), (Strides{2, 1}));
  EXPECT_EQ(values(t), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  const Array c = a.copy();
  EXPECT_FALSE(c.shares_storage_with(a));
  EXPECT_EQ(values(c), values(a));
  // A copy is independent of the original.
  c.data<float>()[0] = 42;
  EXPECT_EQ(a.data<float>()[0], 0.0f);
  // Size-1 axes may have any stride and still count as contiguous.
  EXPECT_TRUE(iota({3, 1}).broadcast_to({3, 1}).is_contiguous());
  EXPECT_TRUE(iota({1, 3}).transpose(0, 1).reshape({1, 3}).is_contiguous());
  // A reversed view packs in logical order.
  EXPECT_EQ(values(iota({4}).slice(0, 3, -5, -1).contiguous()), (std::vector<double>{3, 2, 1, 0}));
}

TEST(ArrayViews, AstypeSaturatesAndMapsNanToZero) {
  const Array f =
      Array::from_vector<float>({1.9f, -1.9f, 300.0f, -300.0f, NAN, INFINITY, -INFINITY, 127.5f, -0.5f}, {9});
  EXPECT_EQ(f.astype(DType::i8).to_i64(), (std::vector<int64_t>{1, -1, 127, -128, 0, 127, -128, 127, 0}));
  EXPECT_EQ(f.astype(DType::u8).to_i64(), (std::vector<int64_t>{1, 0, 255, 0, 0, 255, 0, 127, 0}));
  EXPECT_EQ(f.astype(DType::i32).to_i64(),
            (std::vector<int64_t>{1, -1, 300, -300, 0, 2147483647, -2147483648LL, 127, 0}));
  const Array big = Array::from_vector<double>({1e300, -1e300, 9.3e18, 4e9}, {4});
  EXPECT_EQ(big.astype(DType::i64).to_i64(), (std::vector<int64_t>{INT64_MAX, INT64_MIN, INT64_MAX, 4000000000LL}));
  EXPECT_EQ(big.astype(DType::i32).to_i64(), (std::vector<int64_t>{INT32_MAX, INT32_MIN, INT32_MAX, INT32_MAX}));
  // Any non-zero value (NaN included) is true; integers wrap between integer types.
  EXPECT_EQ(f.astype(DType::boolean).to_i64(), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(Array::from_vector<float>({0.0f, -0.0f}, {2}).astype(DType::boolean).to_i64(),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(Array::from_vector<int32_t>({300, -129, 255}, {3}).astype(DType::i8).to_i64(),
            (std::vector<int64_t>{44, 127, -1}));
  EXPECT_EQ(Array::from_vector<int32_t>({-1, 256}, {2}).astype(DType::u8).to_i64(), (std::vector<int64_t>{255, 0}));
  // Half types round to nearest even and go through float.
  EXPECT_EQ(Array::from_vector<float>({0.1f, 70000.0f}, {2}).astype(DType::f16).to_f64(),
            (std::vector<double>{0.0999755859375, INFINITY}));
  EXPECT_EQ(Array::from_vector<float>({0.1f}, {1}).astype(DType::bf16).to_f64(), (std::vector<double>{0.10009765625}));
  EXPECT_EQ(Array::from_vector<float>({2.5f, 70000.0f}, {2}).astype(DType::f16).astype(DType::i32).to_i64(),
            (std::vector<int64_t>{2, INT32_MAX}));
  // astype of a strided view reads in logical order.
  EXPECT_EQ(iota({2, 3}).transpose(0, 1).astype(DType::i64).to_i64(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(ArrayViews, ConstructionAndAccess) {
  EXPECT_TESSERA_ERROR(Array::empty(DType::f32, {2, -1}), "negative dimension", "[2, -1]");
  EXPECT_TESSERA_ERROR(Array::from_vector<float>({1, 2, 3}, {2, 2}), "from_vector", "3 values", "[2, 2]");
  EXPECT_TESSERA_ERROR(iota({2}).item(), "item", "[2]");
  EXPECT_TESSERA_ERROR(iota({2}).data<double>(), "requested f64", "holds f32");
  EXPECT_TESSERA_ERROR(Array().raw_data(), "undefined");
  EXPECT_FALSE(Array().defined());
  EXPECT_EQ(Array::scalar(2.5).item(), 2.5);
  EXPECT_EQ(Array::scalar(2.5).rank(), 0);
  EXPECT_EQ(Array::scalar(7, DType::i8).dtype(), DType::i8);
  EXPECT_EQ(Array::full(DType::i8, {2}, 1000).to_i64(), (std::vector<int64_t>{127, 127}));
  EXPECT_EQ(Array::zeros(DType::bf16, {3}).to_f64(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(Array::zeros(DType::f64, {2, 0}).numel(), 0);
  EXPECT_EQ(Array::zeros(DType::f64, {2, 0}).nbytes(), 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Array::empty(DType::u8, {3}).raw_data()) % 64, 0u);
  EXPECT_EQ(iota({2, 2}).to_string(), "array(f32[2, 2], [0, 1, 2, 3])");
  EXPECT_EQ(iota({5}).to_string(2), "array(f32[5], [0, 1, ...])");
}

TEST(ArrayViews, EmptyChecksEveryDimensionAfterAZero) {
  // The element count is 0, but the strides of the other dimensions would overflow 64 bits.
  EXPECT_TESSERA_ERROR(Array::empty(DType::f32, {0, int64_t{1} << 62, int64_t{1} << 62}), "too large to allocate");
  EXPECT_TESSERA_ERROR(Array::empty(DType::u8, {int64_t{1} << 40, 0, int64_t{1} << 40}), "too large to allocate");
  const Array ok = Array::empty(DType::f32, {0, int64_t{1} << 20, 3});
  EXPECT_EQ(ok.numel(), 0);
  EXPECT_EQ(ok.strides(), (Strides{(int64_t{1} << 20) * 3, 3, 1}));
}
