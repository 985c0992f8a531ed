#pragma once
// Writes GGUF v3 files that llama.cpp loads: metadata in insertion order, tensor infos, then each
// tensor's bytes at the next multiple of the alignment, in the order added (llama.cpp requires the
// offsets to increase in that order without gaps beyond the padding). Files are written atomically
// (a temporary file renamed into place), so a failure never leaves a half-written model.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/gguf/gguf_value.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::io::gguf {

// The GGUF type that stores a plain (unquantized) array of `dt`; fails naming `tensor_name` for a dtype
// GGUF has no type for (bool, u8).
quant::GgmlType gguf_type_of(DType dt, const std::string& tensor_name);

class Writer {
 public:
  // `alignment` must be a power of two of at most kMaxAlignment.
  explicit Writer(uint64_t alignment = kDefaultAlignment);

  // Sets a metadata entry; an existing key keeps its position. "general.alignment" is managed by the
  // writer (written when the alignment is not the default) and cannot be set here. Keys and tensor
  // names are looked up in hash tables, so a file of a million entries is built in linear time.
  void set(const std::string& key, Value value);
  // Removes `key` if present and adds it last (what ggml's gguf_set_val_* does to an existing key).
  void append(const std::string& key, Value value);
  void remove(const std::string& key);  // linear in the number of entries after `key`
  const Value* find(const std::string& key) const;
  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  // Copies every metadata entry of `reader` (except general.alignment).
  void copy_metadata(const Reader& reader);

  // Adds a tensor of GGUF dims `ne` (ne[0] contiguous) whose encoded bytes are `data`
  // (row_bytes(type, ne[0]) * rows bytes). `owner` keeps borrowed bytes alive until write().
  void add_tensor(const std::string& name, quant::GgmlType type, std::vector<int64_t> ne, std::span<const uint8_t> data,
                  std::shared_ptr<const void> owner = {});
  void add_tensor(const std::string& name, quant::GgmlType type, std::vector<int64_t> ne, std::vector<uint8_t> data);
  // An f32/f16/bf16/... Array (row-major shape; written as its own dtype; f64/i32/... map to the
  // matching ggml type; bool is rejected).
  void add_array(const std::string& name, const Array& array);
  size_t num_tensors() const { return tensors_.size(); }

  void write(const std::string& path) const;
  std::string serialize() const;  // the exact bytes write() stores

 private:
  struct Pending {
    std::string name;
    quant::GgmlType type;
    std::vector<int64_t> ne;
    std::span<const uint8_t> data;
    std::shared_ptr<const void> owner;
  };
  template <class Sink>
  void emit(Sink& sink) const;

  uint64_t alignment_;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::unordered_map<std::string, size_t> key_index_;  // key -> position in metadata_
  std::vector<Pending> tensors_;
  std::unordered_set<std::string> tensor_names_;
};

}  // namespace tessera::io::gguf
