#include "tessera/io/safetensors_summary.h"

#include <fmt/format.h>

#include <cstring>

#include "tessera/core/printable.h"
#include "tessera/io/value_summary.h"

namespace tessera::io {

std::string describe_safetensors(const SafetensorsHeader& header, uint64_t file_bytes) {
  std::string out = fmt::format("safetensors: {} tensors, {} metadata entries, {} bytes\n", header.tensors.size(),
                                header.metadata.size(), file_bytes);
  if (!header.metadata.empty()) out += "metadata:\n";
  for (const auto& [key, value] : header.metadata) {
    out += fmt::format("  {} = {}\n", printable(key, 64), printable(value, 120));
  }
  int64_t values = 0;
  uint64_t bytes = 0;
  out += "tensors:\n";
  for (const auto& [name, e] : header.tensors) {
    out += fmt::format("  {:<40} {:<5} {:<18} {} bytes\n", printable(name, 64), safetensors_dtype_name(e.dtype),
                       shape_str(e.shape), e.nbytes);
    values += shape_numel(e.shape);
    bytes += e.nbytes;
  }
  return out + fmt::format("total: {} values in {} bytes\n", values, bytes);
}

std::string describe_safetensors_tensor(const std::string& name, const SafetensorsEntry& entry, const Array& values) {
  return fmt::format("tensor {}\n  dtype   {}\n  shape   {}\n  bytes   {}\n  offset  {}\n", printable(name, 200),
                     safetensors_dtype_name(entry.dtype), shape_str(entry.shape), entry.nbytes, entry.offset) +
         describe_values(values);
}

Array safetensors_tensor(const uint8_t* image, const SafetensorsEntry& entry) {
  Array a = Array::empty(entry.dtype, entry.shape);
  if (entry.nbytes > 0) std::memcpy(a.raw_data(), image + entry.offset, entry.nbytes);
  return a;
}

}  // namespace tessera::io
