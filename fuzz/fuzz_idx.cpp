// libFuzzer target for the IDX reader (plain and gzip'd): any input must load or throw tessera::Error.
// Inputs that load must survive a write/read round trip unchanged (compressed and not).
#include <cstring>

#include "fuzz/fuzz_target.h"
#include "tessera/data/idx.h"

TESSERA_FUZZ_TARGET(idx) {
  tessera::Array a;
  try {
    a = tessera::data::read_idx_from_memory(data, size, "fuzz input");
  } catch (const tessera::Error& e) {
    FUZZ_CHECK(tessera::fuzz::is_short_plain_message(e.what()));
    return 0;
  }
  std::vector<uint8_t> bytes = tessera::data::serialize_idx(a);
  for (bool compress : {false, true}) {
    if (compress) bytes = tessera::data::gzip(bytes.data(), bytes.size(), 1);
    const tessera::Array b = tessera::data::read_idx_from_memory(bytes.data(), bytes.size(), "round trip");
    FUZZ_CHECK(a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes());
    FUZZ_CHECK(a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
  }
  return 0;
}
