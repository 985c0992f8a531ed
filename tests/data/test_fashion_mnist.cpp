#include <filesystem>

#include "io/io_test_util.h"
#include "tessera/data/fashion_mnist.h"
#include "tessera/data/idx.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// A miniature Fashion-MNIST directory: 3 training images whose pixel p of image i is (i + p) % 256.
void write_fake_split(const ScratchDir& dir, const std::string& prefix, int64_t n, bool compress,
                      std::vector<uint8_t> labels) {
  std::vector<uint8_t> px(static_cast<size_t>(n * 784));
  for (size_t k = 0; k < px.size(); ++k) px[k] = static_cast<uint8_t>((k / 784 + k % 784) % 256);
  const std::string suffix = compress ? ".gz" : "";
  data::write_idx(dir.file(prefix + "-images-idx3-ubyte" + suffix), Array::from_vector(px, {n, 28, 28}), compress);
  data::write_idx(dir.file(prefix + "-labels-idx1-ubyte" + suffix), Array::from_vector(labels, {n}), compress);
}

}  // namespace

TEST(FashionMnist, LoadsFromAnyDirectory) {
  ScratchDir dir;
  write_fake_split(dir, "train", 3, true, {9, 0, 4});
  write_fake_split(dir, "t10k", 2, false, {1, 2});  // uncompressed copies are found too
  const data::TensorDataset train = data::load_fashion_mnist("train", dir.path().string());
  EXPECT_EQ(shape_str(train.features().shape()), "[3, 1, 28, 28]");
  EXPECT_EQ(train.features().dtype(), DType::f32);
  EXPECT_EQ(train.targets().dtype(), DType::i64);
  EXPECT_EQ(train.targets().to_i64(), (std::vector<int64_t>{9, 0, 4}));
  const std::vector<double> x = train.features().to_f64();
  EXPECT_FLOAT_EQ(x[0], 0.0f);
  EXPECT_FLOAT_EQ(x[255], 1.0f);              // image 0, pixel 255
  EXPECT_FLOAT_EQ(x[784 + 10], 11.0f / 255);  // image 1, pixel 10
  const data::TensorDataset test = data::load_fashion_mnist("test", dir.path().string(), /*flatten=*/true);
  EXPECT_EQ(shape_str(test.features().shape()), "[2, 784]");
  EXPECT_EQ(test.targets().to_i64(), (std::vector<int64_t>{1, 2}));
}

TEST(FashionMnist, Errors) {
  ScratchDir dir;
  EXPECT_TESSERA_ERROR(data::load_fashion_mnist("train", dir.path().string()), dir.file("train-images-idx3-ubyte.gz"),
                       "dataset-fashion-mnist", "apt-get install dataset-fashion-mnist");
  EXPECT_TESSERA_ERROR(data::load_fashion_mnist("validation", dir.path().string()), "unknown split 'validation'");
  write_fake_split(dir, "train", 2, true, {3, 10});
  EXPECT_TESSERA_ERROR(data::load_fashion_mnist("train", dir.path().string()), "label 10 of example 1",
                       "outside [0, 10)");
  // Labels that do not match the image count.
  data::write_idx(dir.file("train-labels-idx1-ubyte.gz"), Array::from_vector<uint8_t>({1, 2, 3}, {3}), true);
  EXPECT_TESSERA_ERROR(data::load_fashion_mnist("train", dir.path().string()), "u8[3]", "expected u8[2] labels");
  // Images of the wrong size.
  data::write_idx(dir.file("t10k-images-idx3-ubyte.gz"), Array::zeros(DType::u8, {1, 27, 28}), true);
  data::write_idx(dir.file("t10k-labels-idx1-ubyte.gz"), Array::zeros(DType::u8, {1}), true);
  EXPECT_TESSERA_ERROR(data::load_fashion_mnist("test", dir.path().string()), "u8[1, 27, 28]",
                       "expected u8[N, 28, 28]");
}

// The headers are checked before any data is inflated: a file that declares the wrong shape is refused
// for its shape even when its data would also be short; a file with more data than it declares (a gzip
// bomb is the extreme case) is refused without inflating the rest.
TEST(FashionMnist, ChecksHeadersBeforeReadingData) {
  ScratchDir dir;
  write_fake_split(dir, "train", 2, true, {1, 2});
  const std::vector<uint8_t> wrong =
      data::gzip(u8(std::string("\0\0\x08\x03\0\0\0\x02\0\0\0\x1c\0\0\0\x1d", 16) + "short"), 21);
  write_bytes(dir.file("train-images-idx3-ubyte.gz"), std::string(wrong.begin(), wrong.end()));
  EXPECT_TESSERA_ERROR(data::load_fashion_mnist("train", dir.path().string()), "u8[2, 28, 29]",
                       "expected u8[N, 28, 28]");
  // The right header and 2 images, then 8 MiB more.
  std::string images =
      std::string("\0\0\x08\x03\0\0\0\x02\0\0\0\x1c\0\0\0\x1c", 16) + std::string(2 * 784 + (8 << 20), '\0');
  const std::vector<uint8_t> bomb = data::gzip(u8(images), images.size());
  write_bytes(dir.file("train-images-idx3-ubyte.gz"), std::string(bomb.begin(), bomb.end()));
  EXPECT_TESSERA_ERROR(data::load_fashion_mnist("train", dir.path().string()), "train-images-idx3-ubyte.gz",
                       "need 1568 data bytes", "trailing bytes");
}

TEST(FashionMnist, RealDataset) {
  if (!std::filesystem::exists(std::string(data::kFashionMnistDir) + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST is not installed under " << data::kFashionMnistDir
                 << "; install the Debian package dataset-fashion-mnist (apt-get install dataset-fashion-mnist)";
  }
  const data::TensorDataset train = data::load_fashion_mnist("train");
  const data::TensorDataset test = data::load_fashion_mnist("test", data::kFashionMnistDir, /*flatten=*/true);
  EXPECT_EQ(shape_str(train.features().shape()), "[60000, 1, 28, 28]");
  EXPECT_EQ(shape_str(test.features().shape()), "[10000, 784]");
  // Balanced classes: 6000 per class in training, 1000 in test.
  for (const auto& [ds, per_class] : {std::pair{&train, 6000}, std::pair{&test, 1000}}) {
    std::vector<int64_t> counts(10, 0);
    for (int64_t y : ds->targets().to_i64()) {
      ASSERT_GE(y, 0);
      ASSERT_LT(y, 10);
      ++counts[static_cast<size_t>(y)];
    }
    for (int64_t c : counts) EXPECT_EQ(c, per_class);
  }
  // Known pixel statistics of the training set scaled to [0, 1] (mean 0.2860, std 0.3530).
  const float* px = train.features().data<float>();
  double sum = 0, sum_sq = 0;
  float lo = 1, hi = 0;
  for (int64_t i = 0; i < train.features().numel(); ++i) {
    sum += px[i];
    sum_sq += static_cast<double>(px[i]) * px[i];
    lo = std::min(lo, px[i]);
    hi = std::max(hi, px[i]);
  }
  const double n = static_cast<double>(train.features().numel());
  const double mean = sum / n;
  EXPECT_NEAR(mean, data::kFashionMnistMean, 5e-4);
  EXPECT_NEAR(std::sqrt(sum_sq / n - mean * mean), data::kFashionMnistStd, 5e-4);
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
  // The first training label is 9 (ankle boot) and the first test label 9 as well.
  EXPECT_EQ(train.targets().to_i64()[0], 9);
  EXPECT_EQ(test.targets().to_i64()[0], 9);
}
