#pragma once
// Human-readable summaries of safetensors files (what `tessera inspect FILE.safetensors` prints): a
// checkpoint's or an exported model's tensors, dtypes, shapes and metadata.
#include <string>

#include "tessera/io/safetensors.h"

namespace tessera::io {

// The metadata entries, one line per tensor (name, dtype, shape, bytes) and the totals. Keys, values
// and names are escaped and cut, so a hostile header cannot move the cursor or forge lines.
std::string describe_safetensors(const SafetensorsHeader& header, uint64_t file_bytes);
// One tensor in detail, with statistics of its values.
std::string describe_safetensors_tensor(const std::string& name, const SafetensorsEntry& entry, const Array& values);

// The tensor's values copied out of a file image (dtype and shape as stored).
Array safetensors_tensor(const uint8_t* image, const SafetensorsEntry& entry);

}  // namespace tessera::io
