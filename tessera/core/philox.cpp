#include "tessera/core/philox.h"

namespace tessera {

namespace {
// Round multipliers and Weyl key increments of Philox-4x32 (the golden ratio and sqrt(3) - 1 in 0.32
// fixed point for the increments).
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

PhiloxCounter round_once(const PhiloxCounter& c, const PhiloxKey& k) {
  const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
  const auto hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  const auto hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}
}  // namespace

PhiloxBlock philox4x32_10(const PhiloxCounter& counter, const PhiloxKey& key) {
  PhiloxCounter c = counter;
  PhiloxKey k = key;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    c = round_once(c, k);
  }
  return c;
}

PhiloxBlock philox_block(uint64_t seed, uint64_t counter) {
  return philox4x32_10({static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u, 0u},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

}  // namespace tessera
