#pragma once
// Hugging Face safetensors checkpoints: an 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...}
// padded with spaces (nothing else may follow the object), then the raw little-endian tensor bytes (offsets count from the start of that
// data section). Readers validate everything and throw tessera::Error naming the file, the tensor and
// what was expected; they never read outside the input.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/core/state_dict.h"

namespace tessera::io {

// A whole file: its tensors and the string pairs of its header's "__metadata__".
struct SafetensorsFile {
  StateDict tensors;                            // by name, contiguous host arrays
  std::map<std::string, std::string> metadata;  // the header's "__metadata__" (empty when absent)
};

// Writes the tensors (in sorted-name order, any strides) atomically, as safetensors' save_file. The
// header is padded with spaces to a multiple of 8 bytes so the data section starts 8-byte aligned.
// Names must be valid UTF-8 and not "__metadata__".
void save_safetensors(const std::string& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata = {});
// The exact bytes save_safetensors writes.
std::string serialize_safetensors(const StateDict& tensors, const std::map<std::string, std::string>& metadata = {});

// The tensors of a file, as safetensors' load_file: what Module::load_state_dict takes.
StateDict load_safetensors(const std::string& path);
// The tensors and the header metadata, from one read of the file.
SafetensorsFile load_safetensors_with_metadata(const std::string& path);

// The tensors of a safetensors image without their data: dtype, shape and where each one's bytes lie,
// validated exactly as load_safetensors validates them (load_safetensors is this plus the copies).
// Converters that read many large shards map the files (MappedFile) and take each tensor's bytes
// from the mapping instead of copying whole files.
struct SafetensorsEntry {
  DType dtype = DType::f32;  // the tensor's element type
  Shape shape;               // the tensor's dimensions
  uint64_t offset = 0;  // of the first byte, from the start of the image (not of the data section)
  uint64_t nbytes = 0;  // numel(shape) * dtype_size(dtype): the tensor's bytes start at `offset`
};
// A safetensors header, parsed and validated: each tensor's entry and the metadata.
struct SafetensorsHeader {
  std::map<std::string, SafetensorsEntry> tensors;  // by name
  std::map<std::string, std::string> metadata;      // the header's "__metadata__" (empty when absent)
};
// Parses and validates the header of an image of `size` bytes (its first 8 + N bytes; every entry's bytes
// must lie within `size`). Throws tessera::Error naming `what` and the tensor on anything malformed.
SafetensorsHeader read_safetensors_header(const uint8_t* data, size_t size, const std::string& what);
// Parses an in-memory safetensors image; `what` names it in error messages.
SafetensorsFile load_safetensors_from_memory(const uint8_t* data, size_t size, const std::string& what);

// "F32", "BF16", "BOOL", ... and back (the latter throws naming `what` on unknown names).
const char* safetensors_dtype_name(DType dtype);
DType parse_safetensors_dtype(const std::string& name, const std::string& what);  // see above

// Headers above this size are rejected before anything is allocated (the reference implementation's limit).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;
// Arrays and objects nested deeper than this are rejected while parsing (a safetensors header needs 3
// levels); nothing deeper is ever built, printed or destroyed recursively.
inline constexpr int kSafetensorsMaxJsonDepth = 64;

}  // namespace tessera::io
