#pragma once
// GGUF files (versions 2 and 3), the format of llama.cpp's models:
//   "GGUF" magic, u32 version, u64 tensor count, u64 metadata count,
//   metadata: (string key, u32 value type, value)*,
//   tensor infos: (string name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset)*,
//   zero padding to `general.alignment` (default 32), then the data section; every tensor's offset is
//   relative to it and a multiple of the alignment.
// Strings are a u64 length and that many bytes; everything is little-endian. ne[0] is the contiguous
// (fastest) dimension, so Tessera's row-major shape is ne reversed.
//
// The reader validates the whole structure before handing anything out: truncation, impossible
// counts, unknown types, too many or too large dimensions, sizes that overflow, tensors outside the
// data section, misaligned or overlapping tensors, duplicate names and an alignment that is not a power
// of two up to kMaxAlignment all raise tessera::Error naming the file and the byte offset (names from the
// file are escaped, tessera/core/printable.h). It never reads outside the input; non-regular files
// (devices, FIFOs, directories) are refused before reading.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/io/gguf/gguf_value.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::io::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint64_t kDefaultAlignment = 32;
// general.alignment must be a power of two no larger than this: the padding it implies is written out,
// so a hostile 2^31 would turn a 60-byte file into gigabytes of zeros (llama.cpp's files use 32).
inline constexpr uint64_t kMaxAlignment = 65536;
inline constexpr int kMaxDims = 4;            // GGML_MAX_DIMS
inline constexpr int kMaxArrayNesting = 8;    // arrays of arrays deeper than this are rejected
inline constexpr size_t kMaxTensorName = 63;  // llama.cpp's GGML_MAX_NAME minus the terminator
// Largest element count (counting only non-zero dimensions) a tensor may claim: 2^45, so that its
// values fit one Array even as f64.
inline constexpr int64_t kMaxTensorValues = int64_t{1} << 45;

struct TensorInfo {
  std::string name;
  quant::GgmlType type = quant::GgmlType::f32;
  std::vector<int64_t> ne;  // GGUF order: ne[0] is contiguous
  uint64_t offset = 0;      // from the start of the data section
  uint64_t nbytes = 0;
  uint64_t info_offset = 0;  // where this tensor's info record starts in the file (for messages)

  Shape shape() const { return Shape(ne.rbegin(), ne.rend()); }  // row-major
  int64_t numel() const;
  int64_t row_length() const { return ne.empty() ? 1 : ne[0]; }
  int64_t num_rows() const;
};

class Reader {
 public:
  // Maps the file (copy-on-write: writing into a returned view never changes the file).
  static Reader open(const std::string& path);
  // Parses a copy of an in-memory image; `what` names it in messages.
  static Reader from_memory(const uint8_t* data, size_t size, const std::string& what);

  const std::string& source() const;
  uint32_t version() const;
  uint64_t alignment() const;
  uint64_t data_offset() const;  // absolute file offset of the data section
  uint64_t file_size() const;

  // Metadata in file order.
  const std::vector<std::pair<std::string, Value>>& metadata() const;
  const Value* find(const std::string& key) const;
  const Value& get(const std::string& key) const;  // throws naming the key and the file

  // Tensors in file order.
  const std::vector<TensorInfo>& tensors() const;
  const TensorInfo* find_tensor(const std::string& name) const;
  const TensorInfo& tensor(const std::string& name) const;   // throws naming the tensor and the file
  const uint8_t* tensor_data(const TensorInfo& info) const;  // info.nbytes readable bytes

  // The tensor as an Array without copying where possible: f32/f16/bf16/f64/i8/i32/i64 keep their
  // dtype and shape (i16 is widened to i32, a copy); block types become u8 arrays of the raw blocks
  // with the last dimension counted in bytes (row_bytes) instead of values. Data whose address is not
  // aligned for its dtype is copied.
  Array view(const TensorInfo& info) const;
  Array view(const std::string& name) const { return view(tensor(name)); }
  // The tensor decoded to f32 with its row-major shape.
  Array dequantize(const TensorInfo& info) const;
  Array dequantize(const std::string& name) const { return dequantize(tensor(name)); }

  struct State;

 private:
  explicit Reader(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

}  // namespace tessera::io::gguf
