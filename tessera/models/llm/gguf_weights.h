#pragma once
// Weights of a GGUF model as graph constants, kept in the file's encoding. Matrices become u8 tensors
// of their raw rows ([rows, row_bytes], what ops::quantized_matmul and ops::dequantize take) viewing the
// mapped file, so a Q4_K model stays Q4_K and nothing is copied; vectors (norm weights, biases) are
// decoded to f32. Every lookup checks the name and the shape against what the architecture expects and
// names both in its error.
#include <cstdint>
#include <string>

#include "tessera/api/tensor.h"
#include "tessera/io/gguf/gguf_reader.h"

namespace tessera::models::llm {

// A matrix [rows, cols] (row-major; GGUF ne [cols, rows]) in its GGUF block type.
struct QuantWeight {
  Tensor blocks;     // u8 [rows, row_bytes(type, cols)]
  std::string type;  // ggml type name: "f32", "f16", "q4_k", ...
  int64_t rows = 0;
  int64_t cols = 0;
};

class WeightLoader {
 public:
  // `arch` names the model in messages ("llama").
  WeightLoader(const io::gguf::Reader& file, std::string arch) : file_(file), arch_(std::move(arch)) {}

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
  QuantWeight matrix(const std::string& name, int64_t rows, int64_t cols) const;
  Tensor vector(const std::string& name, int64_t n) const;  // f32 [n]

 private:
  const io::gguf::TensorInfo& expect(const std::string& name, const Shape& ne) const;

  const io::gguf::Reader& file_;
  std::string arch_;
};

}  // namespace tessera::models::llm
