#pragma once
// Random numbers from a counter-based generator (Philox-4x32-10): element i of a draw uses counter
// (offset + i), so a seed gives the same numbers on every backend and any thread count.
#include <cstdint>

#include "tessera/api/tensor.h"

namespace tessera::ops {

// A seed plus a running counter; each draw takes the next block of counters.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}
  uint64_t seed() const { return seed_; }  // the seed it was made with
  uint64_t offset() const { return offset_; }  // counters used so far: save it to resume the stream
  void set_offset(uint64_t offset) { offset_ = offset; }  // resumes the stream at a saved offset()
  // Reserves `count` counters and returns the first.
  uint64_t advance(uint64_t count) {
    const uint64_t first = offset_;
    offset_ += count;
    return first;
  }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The generator every draw uses when none is passed (PyTorch's default generator); seed 0 at start.
Generator& default_generator();
// Reseeds the default generator and rewinds its counter, as torch.manual_seed.
void manual_seed(uint64_t seed);

// Every draw takes its generator by reference, after the distribution's parameters and before the
// dtype; left out, it is default_generator().

// Standard normal numbers (mean 0, stddev 1), as torch.randn.
Tensor randn(const Shape& shape, Generator& gen = default_generator(), DType dtype = DType::f32);
Tensor randn(const Shape& shape, DType dtype);
// Uniform numbers in [0, 1), as torch.rand.
Tensor rand(const Shape& shape, Generator& gen = default_generator(), DType dtype = DType::f32);
Tensor rand(const Shape& shape, DType dtype);

// Uniform numbers in [low, high).
Tensor uniform(const Shape& shape, double low, double high, Generator& gen = default_generator(),
               DType dtype = DType::f32);
// Normal numbers of that mean and standard deviation.
Tensor normal(const Shape& shape, double mean, double stddev, Generator& gen = default_generator(),
              DType dtype = DType::f32);
// 1 with probability p (elementwise, p broadcast to the result), else 0, in p's dtype.
Tensor bernoulli(const Tensor& p, Generator& gen = default_generator());
// Integers uniformly in [low, high).
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen = default_generator(),
               DType dtype = DType::i64);
// A random permutation of 0..n-1 (i64).
Tensor permutation(int64_t n, Generator& gen = default_generator());

}  // namespace tessera::ops
