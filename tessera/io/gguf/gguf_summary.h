#pragma once
// Human-readable summaries of GGUF files (what `tessera inspect FILE.gguf` prints).
#include <string>

#include "tessera/io/gguf/gguf_reader.h"

namespace tessera::io::gguf {

// Header facts, every metadata entry (arrays shortened to `max_items` items), a count of tensors per
// type and one line per tensor (name, type, ne, bytes, data offset). Keys and names are escaped and
// cut at 64 characters, so the text grows linearly with the file however long its names are.
std::string describe_file(const Reader& reader, size_t max_items = 8);
// One tensor in detail, with statistics of its dequantized values when Tessera can decode its type.
std::string describe_tensor(const Reader& reader, const TensorInfo& info);

}  // namespace tessera::io::gguf
