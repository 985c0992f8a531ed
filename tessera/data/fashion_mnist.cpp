#include "tessera/data/fashion_mnist.h"

#include <filesystem>

#include "tessera/data/idx.h"

namespace tessera::data {

namespace {

// The gzip'd file as shipped, else an uncompressed copy; the error names both paths looked at.
std::string find_file(const std::string& dir, const std::string& name) {
  const std::string gz = dir + "/" + name + ".gz";
  const std::string plain = dir + "/" + name;
  std::error_code ec;
  if (std::filesystem::is_regular_file(gz, ec)) return gz;
  if (std::filesystem::is_regular_file(plain, ec)) return plain;
  fail(
      "load_fashion_mnist: '{}' not found (nor '{}'); install the Debian package dataset-fashion-mnist "
      "(apt-get install dataset-fashion-mnist) or pass the directory that holds the Fashion-MNIST files",
      gz, plain);
}

}  // namespace

TensorDataset load_fashion_mnist(const std::string& split, const std::string& dir, bool flatten) {
  TESSERA_CHECK(split == "train" || split == "test", "load_fashion_mnist: unknown split '{}' (expected train or test)",
                split);
  const std::string prefix = split == "train" ? "train" : "t10k";
  const std::string images_path = find_file(dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = find_file(dir, prefix + "-labels-idx1-ubyte");
  // The headers first: what a file declares is checked before any of its data is read or inflated.
  const IdxHeader image_header = read_idx_header(images_path);
  const IdxHeader label_header = read_idx_header(labels_path);
  const Shape& is = image_header.shape;
  TESSERA_CHECK(image_header.dtype == DType::u8 && is.size() == 3 && is[1] == 28 && is[2] == 28,
                "load_fashion_mnist: '{}' holds {}{}, expected u8[N, 28, 28] images", images_path,
                dtype_name(image_header.dtype), shape_str(is));
  TESSERA_CHECK(label_header.dtype == DType::u8 && label_header.shape == Shape{is[0]},
                "load_fashion_mnist: '{}' holds {}{}, expected u8[{}] labels to match the images", labels_path,
                dtype_name(label_header.dtype), shape_str(label_header.shape), is[0]);
  const Array images = read_idx(images_path);
  const Array labels = read_idx(labels_path);
  const int64_t n = images.shape()[0];

  Array x = Array::empty(DType::f32, flatten ? Shape{n, 784} : Shape{n, 1, 28, 28});
  const uint8_t* px = images.data<uint8_t>();
  float* out = x.data<float>();
  for (int64_t i = 0; i < images.numel(); ++i) out[i] = static_cast<float>(px[i]) / 255.0f;

  Array y = Array::empty(DType::i64, {n});
  const uint8_t* lab = labels.data<uint8_t>();
  int64_t* y_out = y.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    TESSERA_CHECK(lab[i] < 10, "load_fashion_mnist: '{}': label {} of example {} is outside [0, 10)", labels_path,
                  lab[i], i);
    y_out[i] = lab[i];
  }
  return TensorDataset(x, y);
}

}  // namespace tessera::data
