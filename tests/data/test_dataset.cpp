#include "io/io_test_util.h"
#include "tessera/data/dataset.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
using data::Batch;
using data::DataLoader;
using data::TensorDataset;

namespace {

// features[i] = [10 i, 10 i + 1, 10 i + 2], targets[i] = i (as i64).
TensorDataset counting_dataset(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) x.push_back(static_cast<float>(10 * i + k));
    y.push_back(i);
  }
  return TensorDataset(Array::from_vector(x, {n, 3}), Array::from_vector(y, {n}));
}

// Generates examples on the fly, exercising Dataset's default get_batch.
class SquaresDataset : public data::Dataset {
 public:
  explicit SquaresDataset(int64_t n, int64_t odd_shape_at = -1) : n_(n), odd_(odd_shape_at) {}
  int64_t size() const override { return n_; }
  std::pair<Array, Array> get(int64_t i) const override {
    const Shape shape = i == odd_ ? Shape{3} : Shape{2};
    return {Array::full(DType::f64, shape, static_cast<double>(i * i)),
            Array::scalar(static_cast<double>(i), DType::i32)};
  }

 private:
  int64_t n_, odd_;
};

}  // namespace

TEST(TensorDataset, GetAndBatch) {
  const TensorDataset ds = counting_dataset(5);
  EXPECT_EQ(ds.size(), 5);
  auto [x, y] = ds.get(3);
  EXPECT_EQ(x.to_f64(), (std::vector<double>{30, 31, 32}));
  EXPECT_EQ(y.item(), 3);
  EXPECT_EQ(y.rank(), 0);
  const Batch b = ds.get_batch({4, 0, 1, 2, 2});
  EXPECT_EQ(shape_str(b.inputs.shape()), "[5, 3]");
  EXPECT_EQ(b.inputs.to_f64(), (std::vector<double>{40, 41, 42, 0, 1, 2, 10, 11, 12, 20, 21, 22, 20, 21, 22}));
  EXPECT_EQ(b.targets.to_i64(), (std::vector<int64_t>{4, 0, 1, 2, 2}));
  EXPECT_EQ(b.targets.dtype(), DType::i64);
}

TEST(TensorDataset, NonContiguousInputsAndSlices) {
  // Features given as a transposed view are packed at construction.
  const Array xt = Array::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2}).transpose(0, 1);  // [2, 3]
  const TensorDataset ds(xt, Array::from_vector<uint8_t>({7, 8}, {2}));
  EXPECT_EQ(ds.get_batch({1}).inputs.to_i64(), (std::vector<int64_t>{2, 4, 6}));
  const TensorDataset part = counting_dataset(6).slice(2, 5);
  EXPECT_EQ(part.size(), 3);
  EXPECT_EQ(part.get_batch({0, 2}).targets.to_i64(), (std::vector<int64_t>{2, 4}));
  EXPECT_TESSERA_ERROR(counting_dataset(6).slice(4, 7), "TensorDataset::slice", "[4, 7)", "6");
}

TEST(TensorDataset, Errors) {
  EXPECT_TESSERA_ERROR(TensorDataset(Array::zeros(DType::f32, {4, 2}), Array::zeros(DType::i64, {3})), "TensorDataset",
                       "f32[4, 2]", "i64[3]", "number of examples");
  EXPECT_TESSERA_ERROR(TensorDataset(Array::scalar(1), Array::zeros(DType::i64, {1})), "TensorDataset", "f32[]");
  EXPECT_TESSERA_ERROR(TensorDataset(Array(), Array::zeros(DType::i64, {1})), "undefined");
  const TensorDataset ds = counting_dataset(3);
  EXPECT_TESSERA_ERROR(ds.get(3), "TensorDataset::get", "index 3", "3");
  EXPECT_TESSERA_ERROR(ds.get(-1), "index -1");
  EXPECT_TESSERA_ERROR(ds.get_batch({0, 5}), "row 5 is out of range for 3 rows");
  EXPECT_TESSERA_ERROR(ds.get_batch({}), "at least one index");
}

TEST(GatherRows, RunsAndRandomRows) {
  const Array src = Array::from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 2});
  EXPECT_EQ(data::gather_rows(src, {1, 2, 3, 0, 4, 3, 4}).to_i64(),
            (std::vector<int64_t>{2, 3, 4, 5, 6, 7, 0, 1, 8, 9, 6, 7, 8, 9}));
  EXPECT_EQ(shape_str(data::gather_rows(src, {}).shape()), "[0, 2]");
  // Zero-width rows.
  EXPECT_EQ(shape_str(data::gather_rows(Array::zeros(DType::f32, {3, 0}), {2, 1}).shape()), "[2, 0]");
  EXPECT_TESSERA_ERROR(data::gather_rows(src, {4, 5}), "row 5");
  EXPECT_TESSERA_ERROR(data::gather_rows(Array::scalar(1), {0}), "leading row axis");
}

TEST(Dataset, DefaultGetBatchStacksExamples) {
  const SquaresDataset ds(4);
  const Batch b = ds.get_batch({3, 1});
  EXPECT_EQ(shape_str(b.inputs.shape()), "[2, 2]");
  EXPECT_EQ(b.inputs.to_f64(), (std::vector<double>{9, 9, 1, 1}));
  EXPECT_EQ(b.targets.dtype(), DType::i32);
  EXPECT_EQ(b.targets.to_i64(), (std::vector<int64_t>{3, 1}));
  EXPECT_TESSERA_ERROR(SquaresDataset(4, 2).get_batch({0, 2}), "example 2 has input f64[3]", "f64[2]", "share shape");
  EXPECT_TESSERA_ERROR(ds.get_batch({7}), "index 7 is out of range");
}

TEST(Shuffle, SplitMix64KnownOutputs) {
  // Published outputs of SplitMix64 seeded with 1234567.
  uint64_t state = 1234567;
  const uint64_t expected[] = {6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL,
                               4593380528125082431ULL, 16408922859458223821ULL};
  for (uint64_t e : expected) EXPECT_EQ(data::splitmix64_next(state), e);
}

TEST(Shuffle, PermutationMatchesReferenceImplementation) {
  // From an independent Python transcription of the algorithm (SplitMix64, Fisher-Yates from the top,
  // rejection of the lowest 2^64 mod (i + 1) draws).
  EXPECT_EQ(data::shuffled_indices(10, 42), (std::vector<int64_t>{0, 9, 5, 8, 6, 4, 7, 2, 1, 3}));
  EXPECT_TRUE(data::shuffled_indices(0, 1).empty());
  EXPECT_EQ(data::shuffled_indices(1, 1), (std::vector<int64_t>{0}));
}

TEST(Shuffle, RoughlyUniform) {
  // Each of the 6 permutations of 3 elements over 6000 seeds: expect ~1000 each.
  std::map<std::vector<int64_t>, int> counts;
  for (uint64_t seed = 0; seed < 6000; ++seed) ++counts[data::shuffled_indices(3, seed)];
  EXPECT_EQ(counts.size(), 6u);
  for (const auto& [perm, c] : counts) EXPECT_NEAR(c, 1000, 150);
}

TEST(DataLoader, SequentialBatches) {
  auto ds = std::make_shared<TensorDataset>(counting_dataset(7));
  DataLoader loader(ds, 3);
  EXPECT_EQ(loader.num_batches(), 3);
  EXPECT_EQ(loader.batch(0).targets.to_i64(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(loader.batch(2).targets.to_i64(), (std::vector<int64_t>{6}));  // the short last batch
  EXPECT_EQ(loader.batch(2).inputs.to_f64(), (std::vector<double>{60, 61, 62}));
  std::vector<int64_t> seen;
  int batches = 0;
  for (const Batch& b : loader) {
    ++batches;
    for (int64_t t : b.targets.to_i64()) seen.push_back(t);
  }
  EXPECT_EQ(batches, 3);
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));

  DataLoader dropping(ds, 3, false, 0, /*drop_last=*/true);
  EXPECT_EQ(dropping.num_batches(), 2);
  EXPECT_TESSERA_ERROR(dropping.batch(2), "batch 2 is out of range (2 batches)");
  EXPECT_EQ(DataLoader(ds, 7, false, 0, true).num_batches(), 1);
  EXPECT_EQ(DataLoader(ds, 8, false, 0, true).num_batches(), 0);
  EXPECT_EQ(DataLoader(ds, 8).num_batches(), 1);
  EXPECT_EQ(DataLoader(std::make_shared<TensorDataset>(counting_dataset(0)), 4).num_batches(), 0);
}

TEST(DataLoader, ShuffleIsDeterministicPerSeedAndEpoch) {
  auto ds = std::make_shared<TensorDataset>(counting_dataset(10));
  DataLoader a(ds, 4, /*shuffle=*/true, /*seed=*/42);
  DataLoader b(ds, 4, true, 42);
  // Same order as the Python reference of epoch_seed(42, 0) and epoch_seed(42, 1).
  EXPECT_EQ(a.order(), (std::vector<int64_t>{8, 4, 2, 7, 6, 5, 9, 0, 3, 1}));
  a.set_epoch(1);
  EXPECT_EQ(a.order(), (std::vector<int64_t>{0, 8, 5, 2, 4, 1, 7, 3, 6, 9}));
  EXPECT_EQ(a.epoch(), 1);
  EXPECT_NE(a.order(), b.order());
  b.set_epoch(1);
  EXPECT_EQ(a.order(), b.order());
  a.set_epoch(0);
  EXPECT_EQ(a.order(), (std::vector<int64_t>{8, 4, 2, 7, 6, 5, 9, 0, 3, 1}));
  EXPECT_EQ(DataLoader(ds, 4, true, 7).order(), (std::vector<int64_t>{3, 0, 2, 1, 7, 5, 9, 4, 6, 8}));

  // Batches follow the order and cover every example once.
  std::vector<int64_t> seen;
  for (const Batch& batch : a) {
    const std::vector<int64_t> t = batch.targets.to_i64();
    const std::vector<double> x = batch.inputs.to_f64();
    for (size_t i = 0; i < t.size(); ++i) {
      EXPECT_EQ(x[3 * i], 10.0 * t[i]) << "inputs and targets stay paired";
      seen.push_back(t[i]);
    }
  }
  EXPECT_EQ(seen, a.order());
}

TEST(DataLoader, ManyEpochsArePermutations) {
  auto ds = std::make_shared<TensorDataset>(counting_dataset(100));
  DataLoader loader(ds, 16, true, 123);
  std::set<std::vector<int64_t>> distinct;
  for (int64_t epoch = 0; epoch < 20; ++epoch) {
    loader.set_epoch(epoch);
    std::vector<int64_t> sorted = loader.order();
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 100; ++i) ASSERT_EQ(sorted[i], i);
    distinct.insert(loader.order());
  }
  EXPECT_EQ(distinct.size(), 20u);
}

TEST(DataLoader, Errors) {
  EXPECT_TESSERA_ERROR(DataLoader(nullptr, 4), "DataLoader", "null");
  EXPECT_TESSERA_ERROR(DataLoader(std::make_shared<TensorDataset>(counting_dataset(3)), 0), "batch_size", "got 0");
}

TEST(Normalize, GlobalAndPerChannel) {
  const TensorDataset ds(Array::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}),
                         Array::from_vector<int64_t>({0, 1}, {2}));
  const TensorDataset g = data::normalize_features(ds, {1.0}, {2.0});
  expect_close(Tensor(g.features()), {-0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3});
  EXPECT_EQ(g.features().dtype(), DType::f32);
  // Channel c of [N, C, K] uses mean[c], std[c].
  const TensorDataset c = data::normalize_features(ds, {0.0, 4.0}, {1.0, 0.5});
  expect_close(Tensor(c.features()), {0, 1, -4, -2, 4, 5, 4, 6});
  EXPECT_EQ(c.targets().to_i64(), (std::vector<int64_t>{0, 1}));
  // u8 features become f32, f64 stays f64.
  const TensorDataset u(Array::from_vector<uint8_t>({0, 255}, {2}), Array::from_vector<int64_t>({0, 1}, {2}));
  EXPECT_EQ(data::normalize_features(u, {0}, {255}).features().to_f64(), (std::vector<double>{0, 1}));
  EXPECT_EQ(data::normalize_features(u, {0}, {255}).features().dtype(), DType::f32);
  EXPECT_TESSERA_ERROR(data::normalize_features(ds, {0, 0, 0}, {1, 1, 1}), "3 per-channel", "f32[2, 2, 2]");
  EXPECT_TESSERA_ERROR(data::normalize_features(ds, {0}, {0}), "positive");
  EXPECT_TESSERA_ERROR(data::normalize_features(ds, {0, 1}, {1}), "as many means");
}
