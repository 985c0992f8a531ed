#include "tessera/data/dataset.h"

#include <algorithm>
#include <cstring>

namespace tessera::data {

namespace {

Shape with_leading(int64_t n, const Shape& rest) {
  Shape s{n};
  s.insert(s.end(), rest.begin(), rest.end());
  return s;
}

std::string array_desc(const Array& a) {
  return std::string(dtype_name(a.dtype())) + shape_str(a.shape());
}

// Copies a packed example into slot `i` of a packed batch.
void put_example(const Array& batch, int64_t i, const Array& example) {
  const Array c = example.contiguous();
  const size_t nbytes = c.nbytes();
  if (nbytes > 0) std::memcpy(static_cast<std::byte*>(batch.raw_data()) + i * nbytes, c.raw_data(), nbytes);
}

// Mixes the epoch into the seed so that nearby (seed, epoch) pairs give unrelated permutations.
uint64_t epoch_seed(uint64_t seed, int64_t epoch) {
  uint64_t a = seed;
  uint64_t b = static_cast<uint64_t>(epoch) ^ 0x6a09e667f3bcc909ULL;
  return splitmix64_next(a) ^ splitmix64_next(b);
}

}  // namespace

// --- Dataset -----------------------------------------------------------------------------------------

Batch Dataset::get_batch(const std::vector<int64_t>& indices) const {
  TESSERA_CHECK(!indices.empty(), "Dataset::get_batch: expected at least one index");
  const int64_t b = static_cast<int64_t>(indices.size());
  Batch out;
  for (int64_t i = 0; i < b; ++i) {
    const int64_t index = indices[static_cast<size_t>(i)];
    TESSERA_CHECK(index >= 0 && index < size(), "Dataset::get_batch: index {} is out of range for a dataset of {}",
                  index, size());
    auto [input, target] = get(index);
    if (i == 0) {
      out.inputs = Array::empty(input.dtype(), with_leading(b, input.shape()));
      out.targets = Array::empty(target.dtype(), with_leading(b, target.shape()));
    }
    const Shape want_in(out.inputs.shape().begin() + 1, out.inputs.shape().end());
    const Shape want_t(out.targets.shape().begin() + 1, out.targets.shape().end());
    TESSERA_CHECK(input.dtype() == out.inputs.dtype() && input.shape() == want_in,
                  "Dataset::get_batch: example {} has input {} but example {} has {}; every example in a batch "
                  "must share shape and dtype",
                  index, array_desc(input), indices[0],
                  std::string(dtype_name(out.inputs.dtype())) + shape_str(want_in));
    TESSERA_CHECK(target.dtype() == out.targets.dtype() && target.shape() == want_t,
                  "Dataset::get_batch: example {} has target {} but example {} has {}; every example in a batch "
                  "must share shape and dtype",
                  index, array_desc(target), indices[0],
                  std::string(dtype_name(out.targets.dtype())) + shape_str(want_t));
    put_example(out.inputs, i, input);
    put_example(out.targets, i, target);
  }
  return out;
}

// --- TensorDataset ------------------------------------------------------------------------------------

TensorDataset::TensorDataset(Array features, Array targets) {
  TESSERA_CHECK(features.defined() && targets.defined(),
                "TensorDataset: features and targets must be defined, got an undefined array");
  TESSERA_CHECK(features.rank() >= 1 && targets.rank() >= 1,
                "TensorDataset: expected features [N, ...] and targets [N, ...], got {} and {}", array_desc(features),
                array_desc(targets));
  TESSERA_CHECK(features.shape()[0] == targets.shape()[0],
                "TensorDataset: features {} and targets {} disagree on the number of examples ({} vs {})",
                array_desc(features), array_desc(targets), features.shape()[0], targets.shape()[0]);
  features_ = features.contiguous();
  targets_ = targets.contiguous();
}

std::pair<Array, Array> TensorDataset::get(int64_t index) const {
  TESSERA_CHECK(index >= 0 && index < size(), "TensorDataset::get: index {} is out of range for a dataset of {}", index,
                size());
  return {features_.slice(0, index, index + 1).squeeze({0}), targets_.slice(0, index, index + 1).squeeze({0})};
}

Batch TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  TESSERA_CHECK(!indices.empty(), "TensorDataset::get_batch: expected at least one index");
  return {gather_rows(features_, indices, "TensorDataset::get_batch"),
          gather_rows(targets_, indices, "TensorDataset::get_batch")};
}

TensorDataset TensorDataset::slice(int64_t start, int64_t stop) const {
  TESSERA_CHECK(0 <= start && start <= stop && stop <= size(),
                "TensorDataset::slice: [{}, {}) is not a valid range of a dataset of {}", start, stop, size());
  return TensorDataset(features_.slice(0, start, stop), targets_.slice(0, start, stop));
}

Array gather_rows(const Array& source, const std::vector<int64_t>& rows, const char* what) {
  TESSERA_CHECK(source.rank() >= 1, "{}: expected an array with a leading row axis, got {}", what, array_desc(source));
  const Array src = source.contiguous();
  const int64_t n = src.shape()[0];
  Shape row_shape(src.shape().begin() + 1, src.shape().end());
  const size_t row_bytes = static_cast<size_t>(shape_numel(row_shape)) * dtype_size(src.dtype());
  Array out = Array::empty(src.dtype(), with_leading(static_cast<int64_t>(rows.size()), row_shape));
  const std::byte* from = static_cast<const std::byte*>(src.raw_data());
  std::byte* to = static_cast<std::byte*>(out.raw_data());
  size_t k = 0;
  while (k < rows.size()) {
    const int64_t first = rows[k];
    TESSERA_CHECK(first >= 0 && first < n, "{}: row {} is out of range for {} rows", what, first, n);
    size_t run = 1;  // consecutive rows go in one copy (sequential loading copies whole batches at once)
    while (k + run < rows.size() && rows[k + run] == first + static_cast<int64_t>(run) &&
           first + static_cast<int64_t>(run) < n) {
      ++run;
    }
    if (row_bytes > 0) std::memcpy(to + k * row_bytes, from + static_cast<size_t>(first) * row_bytes, run * row_bytes);
    k += run;
  }
  return out;
}

TensorDataset normalize_features(const TensorDataset& dataset, const std::vector<double>& mean,
                                 const std::vector<double>& std) {
  const Array& x = dataset.features();
  TESSERA_CHECK(!mean.empty() && mean.size() == std.size(),
                "normalize_features: expected as many means as standard deviations (at least one), got {} and {}",
                mean.size(), std.size());
  const int64_t channels = static_cast<int64_t>(mean.size());
  if (channels > 1) {
    TESSERA_CHECK(x.rank() >= 2 && x.shape()[1] == channels,
                  "normalize_features: {} per-channel statistics need features [N, {}, ...], got {}", channels,
                  channels, array_desc(x));
  }
  for (double s : std) TESSERA_CHECK(s > 0, "normalize_features: standard deviations must be positive, got {}", s);
  const DType out_dtype = x.dtype() == DType::f64 ? DType::f64 : DType::f32;
  Array y = x.astype(out_dtype);
  const int64_t n = x.shape()[0];
  const int64_t inner = n * channels == 0 ? 0 : x.numel() / (n * channels);
  dispatch_floating(out_dtype, "normalize_features", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* p = y.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t c = 0; c < channels; ++c) {
          const T m = static_cast<T>(mean[c]), inv = static_cast<T>(1.0 / std[c]);
          T* block = p + (i * channels + c) * inner;
          for (int64_t j = 0; j < inner; ++j) block[j] = (block[j] - m) * inv;
        }
      }
    }
  });
  return TensorDataset(y, dataset.targets());
}

// --- shuffling ----------------------------------------------------------------------------------------

uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed) {
  TESSERA_CHECK(n >= 0, "shuffled_indices: expected a non-negative count, got {}", n);
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = i;
  uint64_t state = seed;
  for (int64_t i = n - 1; i > 0; --i) {
    // Uniform j in [0, i]: reject the lowest 2^64 mod (i+1) outputs so every residue is equally likely.
    const uint64_t bound = static_cast<uint64_t>(i) + 1;
    const uint64_t threshold = (0 - bound) % bound;
    uint64_t r = splitmix64_next(state);
    while (r < threshold) r = splitmix64_next(state);
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(r % bound)]);
  }
  return p;
}

// --- DataLoader ---------------------------------------------------------------------------------------

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, int64_t batch_size, bool shuffle, uint64_t seed,
                       bool drop_last)
    : dataset_(std::move(dataset)), batch_size_(batch_size), shuffle_(shuffle), seed_(seed), drop_last_(drop_last) {
  TESSERA_CHECK(dataset_ != nullptr, "DataLoader: the dataset is null");
  TESSERA_CHECK(batch_size_ > 0, "DataLoader: batch_size must be positive, got {}", batch_size_);
  set_epoch(0);
}

int64_t DataLoader::num_batches() const {
  const int64_t n = static_cast<int64_t>(order_.size());
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

void DataLoader::set_epoch(int64_t epoch) {
  epoch_ = epoch;
  const int64_t n = dataset_->size();
  if (shuffle_) {
    order_ = shuffled_indices(n, epoch_seed(seed_, epoch));
  } else {
    order_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order_[static_cast<size_t>(i)] = i;
  }
}

Batch DataLoader::batch(int64_t i) const {
  TESSERA_CHECK(i >= 0 && i < num_batches(), "DataLoader::batch: batch {} is out of range ({} batches)", i,
                num_batches());
  const auto first = order_.begin() + i * batch_size_;
  const auto last = order_.begin() + std::min<int64_t>((i + 1) * batch_size_, static_cast<int64_t>(order_.size()));
  return dataset_->get_batch(std::vector<int64_t>(first, last));
}

}  // namespace tessera::data
