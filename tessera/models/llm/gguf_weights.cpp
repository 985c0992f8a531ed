#include "tessera/models/llm/gguf_weights.h"

#include <memory>

#include "tessera/core/error.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::models::llm {

const io::gguf::TensorInfo& WeightLoader::expect(const std::string& name, const Shape& ne) const {
  const io::gguf::TensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) {
    fail("{}: missing tensor '{}' ({} expects it with GGUF ne {})", file_.source(), name, arch_, shape_str(ne));
  }
  if (t->ne != ne) {
    fail("{}: tensor '{}' has GGUF ne {}, but {} with this file's hyperparameters expects {}", file_.source(), name,
         shape_str(t->ne), arch_, shape_str(ne));
  }
  if (!quant::type_traits(t->type).can_dequantize) {
    fail("{}: tensor '{}' has type {}, which Tessera cannot compute with", file_.source(), name,
         quant::type_name(t->type));
  }
  return *t;
}

QuantWeight WeightLoader::matrix(const std::string& name, int64_t rows, int64_t cols) const {
  const io::gguf::TensorInfo& t = expect(name, {cols, rows});
  const Array view = file_.view(t);
  QuantWeight w;
  w.type = quant::type_name(t.type);
  w.rows = rows;
  w.cols = cols;
  // Float types come back with their own dtype; the ops take every encoding as raw row bytes, so view
  // the same memory as u8 (the storage stays owned by the file mapping through `view`).
  const Shape bytes_shape{rows, quant::row_bytes(t.type, cols, name)};
  const Array raw = view.dtype() == DType::u8
                        ? view
                        : Array::from_external(view.raw_data(), DType::u8, bytes_shape,
                                               std::shared_ptr<const void>(view.storage()));
  w.blocks = Tensor::from_array(raw.reshape(bytes_shape), name);
  return w;
}

Tensor WeightLoader::vector(const std::string& name, int64_t n) const {
  return Tensor::from_array(file_.dequantize(expect(name, {n})), name);
}

}  // namespace tessera::models::llm
