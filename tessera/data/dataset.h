#pragma once
// Datasets and a deterministic mini-batch loader.
//
// A Dataset hands out (input, target) examples; DataLoader groups them into batches stacked along a
// new leading axis. Shuffling uses our own SplitMix64 + Fisher-Yates (std::shuffle's algorithm is
// implementation-defined), so a (seed, epoch) pair gives the same order on every machine and compiler.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tessera/core/array.h"

namespace tessera::data {

// Examples stacked along a new leading axis.
struct Batch {
  Array inputs;   // [B, ...example input shape]
  Array targets;  // [B, ...example target shape]
};

// Examples by index: what a DataLoader batches.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;  // number of examples
  // Example `index` in [0, size()).
  virtual std::pair<Array, Array> get(int64_t index) const = 0;
  // Stacks the examples at `indices` (non-empty). This default calls get() per example and requires
  // every example to share shapes and dtypes; array-backed datasets override it to copy rows directly.
  virtual Batch get_batch(const std::vector<int64_t>& indices) const;
};

// Examples are the rows of two arrays: features [N, ...] and targets [N, ...] (typically [N]).
class TensorDataset : public Dataset {
 public:
  TensorDataset(Array features, Array targets);
  int64_t size() const override { return features_.shape()[0]; }  // N, the rows of the features
  std::pair<Array, Array> get(int64_t index) const override;  // views into the rows, no copy
  Batch get_batch(const std::vector<int64_t>& indices) const override;

  const Array& features() const { return features_; }  // [N, ...], contiguous
  const Array& targets() const { return targets_; }    // [N, ...], contiguous
  // Rows [start, stop) as a dataset sharing storage (for train/validation splits).
  TensorDataset slice(int64_t start, int64_t stop) const;

 private:
  Array features_;  // contiguous
  Array targets_;   // contiguous
};

// Copies rows `rows` of a contiguous array [N, ...] into a new [rows.size(), ...] array; runs of
// consecutive rows are copied with one memcpy. Throws naming `what` on out-of-range rows.
Array gather_rows(const Array& source, const std::vector<int64_t>& rows, const char* what = "gather_rows");

// Features standardised as (x - mean) / std in f32 (f64 stays f64). One mean/std applies to every
// element; C of them apply per channel along axis 1 of the features (e.g. [N, C, H, W]).
TensorDataset normalize_features(const TensorDataset& dataset, const std::vector<double>& mean,
                                 const std::vector<double>& std);

// SplitMix64 (Steele, Lea & Flood 2014): advances `state` and returns the next 64-bit output.
uint64_t splitmix64_next(uint64_t& state);
// A permutation of [0, n) by Fisher-Yates driven by SplitMix64 seeded with `seed`, with unbiased
// bounded draws (rejection sampling); identical on every platform.
std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed);

// Batches of a dataset in order or in a per-epoch shuffle; iterable with a range for.
class DataLoader {
 public:
  DataLoader(std::shared_ptr<Dataset> dataset, int64_t batch_size, bool shuffle = false, uint64_t seed = 0,
             bool drop_last = false);

  // Batches per epoch: size / batch_size rounded up, or down with drop_last.
  int64_t num_batches() const;
  int64_t batch_size() const { return batch_size_; }  // examples per batch (the last may have fewer)
  int64_t epoch() const { return epoch_; }  // the epoch set_epoch() last chose (0 at first)
  // Reorders the examples for `epoch`: with shuffle, a permutation determined by (seed, epoch) alone.
  void set_epoch(int64_t epoch);
  // Example indices of the current epoch, in the order batches take them.
  const std::vector<int64_t>& order() const { return order_; }
  Batch batch(int64_t i) const;  // i in [0, num_batches()); the last may be short unless drop_last
  const Dataset& dataset() const { return *dataset_; }  // the dataset it batches (shared with the caller)

  // Walks the batches of one epoch.
  class Iterator {
   public:
    using value_type = Batch;                // what dereferencing gives (a fresh batch, by value)
    using difference_type = std::ptrdiff_t;  // for std::input_iterator
    Iterator(const DataLoader* loader, int64_t index) : loader_(loader), index_(index) {}
    Batch operator*() const { return loader_->batch(index_); }  // builds the current batch (copies its rows)
    // Moves to the next batch.
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }  // same batch position

   private:
    const DataLoader* loader_;
    int64_t index_;
  };
  // The first batch of the current epoch; a range for does not change the epoch (call set_epoch).
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, num_batches()); }  // one past the last batch

 private:
  std::shared_ptr<Dataset> dataset_;
  int64_t batch_size_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t epoch_ = 0;
  std::vector<int64_t> order_;
};

}  // namespace tessera::data
