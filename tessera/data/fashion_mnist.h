#pragma once
// Fashion-MNIST (Xiao, Rasul & Vollgraf 2017): 28x28 grayscale clothing images in 10 classes,
// 60000 for training and 10000 for testing, stored as gzip'd IDX files. Debian ships them in the
// package `dataset-fashion-mnist` under /usr/share/datasets/fashion-mnist.
#include <array>
#include <string>

#include "tessera/data/dataset.h"

namespace tessera::data {

// Where Debian's dataset-fashion-mnist installs the IDX files: load_fashion_mnist's default directory.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// Pixel statistics of the training set after scaling to [0, 1], for normalize_features.
inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;  // standard deviation of those pixels
// The class names, indexed by label.
inline constexpr std::array<const char*, 10> kFashionMnistClasses = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};

// split "train" or "test". Images become f32 in [0, 1], shaped [N, 1, 28, 28] (or [N, 784] with
// `flatten`); labels are i64 in [0, 10). Reads `<prefix>-images-idx3-ubyte.gz` (or the same without
// .gz) with prefix "train" or "t10k".
TensorDataset load_fashion_mnist(const std::string& split, const std::string& dir = kFashionMnistDir,
                                 bool flatten = false);

}  // namespace tessera::data
