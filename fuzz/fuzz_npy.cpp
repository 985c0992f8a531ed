// libFuzzer target for the .npy reader: any input must load or throw tessera::Error. Inputs that load
// must survive a write/read round trip unchanged.
#include <cstring>

#include "fuzz/fuzz_target.h"
#include "tessera/io/npy.h"

TESSERA_FUZZ_TARGET(npy) {
  tessera::Array a;
  try {
    a = tessera::io::load_npy_from_memory(data, size, "fuzz input");
  } catch (const tessera::Error& e) {
    FUZZ_CHECK(tessera::fuzz::is_short_plain_message(e.what()));
    return 0;
  }
  const std::string bytes = tessera::io::serialize_npy(a);
  const tessera::Array b =
      tessera::io::load_npy_from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "round trip");
  FUZZ_CHECK(a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes());
  FUZZ_CHECK(a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
  return 0;
}
