// libFuzzer target for the safetensors reader: any input must load or throw tessera::Error; anything
// else (a crash, a sanitizer report, another exception type) is a bug. Inputs that load must survive
// a write/read round trip unchanged.
#include <cstring>

#include "tessera/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::io::SafetensorsFile file;
  try {
    file = tessera::io::load_safetensors_from_memory(data, size, "fuzz input");
  } catch (const tessera::Error&) {
    return 0;
  }
  std::vector<std::pair<std::string, tessera::Array>> tensors(file.tensors.begin(), file.tensors.end());
  const std::string bytes = tessera::io::serialize_safetensors(tensors, file.metadata);
  const tessera::io::SafetensorsFile again = tessera::io::load_safetensors_from_memory(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "round trip");
  if (again.metadata != file.metadata || again.tensors.size() != file.tensors.size()) __builtin_trap();
  for (const auto& [name, a] : file.tensors) {
    const tessera::Array& b = again.tensors.at(name);
    if (a.dtype() != b.dtype() || a.shape() != b.shape() || a.nbytes() != b.nbytes()) __builtin_trap();
    if (a.nbytes() > 0 && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) != 0) __builtin_trap();
  }
  return 0;
}
