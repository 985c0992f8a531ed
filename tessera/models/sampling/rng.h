#pragma once
// The sampler's random numbers: a seeded 64-bit Mersenne Twister (its output sequence is fixed by the
// C++ standard) turned into doubles by hand, since std::uniform_real_distribution differs between
// standard libraries; so a seed gives the same tokens everywhere.
#include <cstdint>
#include <random>

namespace tessera::models::sampling {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, 1), from the top 53 bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace tessera::models::sampling
