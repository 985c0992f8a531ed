// libFuzzer target for the safetensors reader: any input must load or throw tessera::Error; anything
// else (a crash, a sanitizer report, another exception type) is a bug. Inputs that load must survive
// a write/read round trip unchanged.
#include <cstring>

#include "fuzz/fuzz_target.h"
#include "tessera/io/safetensors.h"

TESSERA_FUZZ_TARGET(safetensors) {
  tessera::io::SafetensorsFile file;
  try {
    file = tessera::io::load_safetensors_from_memory(data, size, "fuzz input");
  } catch (const tessera::Error& e) {
    FUZZ_CHECK(tessera::fuzz::is_short_plain_message(e.what()));
    return 0;
  }
  const std::string bytes = tessera::io::serialize_safetensors(file.tensors, file.metadata);
  const tessera::io::SafetensorsFile again = tessera::io::load_safetensors_from_memory(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "round trip");
  FUZZ_CHECK(again.metadata == file.metadata && again.tensors.size() == file.tensors.size());
  for (const auto& [name, a] : file.tensors) {
    const tessera::Array& b = again.tensors.at(name);
    FUZZ_CHECK(a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes());
    FUZZ_CHECK(a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
  }
  return 0;
}
