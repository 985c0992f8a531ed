// libFuzzer target for the .npy reader: any input must load or throw tessera::Error. Inputs that load
// must survive a write/read round trip unchanged.
#include <cstring>

#include "tessera/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::Array a;
  try {
    a = tessera::io::load_npy_from_memory(data, size, "fuzz input");
  } catch (const tessera::Error&) {
    return 0;
  }
  const std::string bytes = tessera::io::serialize_npy(a);
  const tessera::Array b =
      tessera::io::load_npy_from_memory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "round trip");
  if (a.dtype() != b.dtype() || a.shape() != b.shape() || a.nbytes() != b.nbytes()) __builtin_trap();
  if (a.nbytes() > 0 && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) != 0) __builtin_trap();
  return 0;
}
