#include "tessera/io/onnx/input_binding.h"

#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/io/onnx/onnx_dtype.h"
#include "tessera/io/onnx/onnx_import.h"

namespace tessera::io::onnx {

std::map<std::string, int64_t> bind_input_types(const OnnxModel& model, const std::vector<ir::TensorType>& types) {
  const auto& inputs = model.inputs();
  TESSERA_CHECK(types.size() == inputs.size(), "{}: the model has {} inputs, {} were given", model.source(),
                inputs.size(), types.size());
  std::map<std::string, int64_t> dims;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const OnnxValueInfo& in = inputs[i];
    const ir::TensorType& t = types[i];
    const std::string name = printable_quoted(in.name);
    TESSERA_CHECK(in.is_tensor, "{}: input {} is not a tensor (sequences, maps and optionals are not supported)",
                  model.source(), name);
    if (in.elem_type != 0) {
      const DType want = require_dtype(in.elem_type, model.source() + ": input " + name);
      TESSERA_CHECK(t.dtype == want, "{}: input {} is {}, the model declares {}", model.source(), name,
                    dtype_name(t.dtype), onnx_type_name(in.elem_type));
    }
    if (!in.dims) continue;
    TESSERA_CHECK(t.rank() == static_cast<int64_t>(in.dims->size()), "{}: input {} has rank {}, the model declares {}",
                  model.source(), name, t.rank(), in.dims->size());
    for (size_t d = 0; d < in.dims->size(); ++d) {
      const OnnxDim& dim = (*in.dims)[d];
      const int64_t got = t.shape[d];
      if (dim.size) {
        TESSERA_CHECK(got == *dim.size, "{}: input {} dimension {} is {}, the model declares {}", model.source(),
                      name, d, got, *dim.size);
      } else if (!dim.param.empty()) {
        auto [it, fresh] = dims.emplace(dim.param, got);
        TESSERA_CHECK(fresh || it->second == got,
                      "{}: input {} dimension {} ({}) is {}, but an earlier input bound {} to {}", model.source(),
                      name, d, printable_quoted(dim.param), got, printable_quoted(dim.param), it->second);
      }
    }
  }
  return dims;
}

std::vector<ir::TensorType> declared_input_types(const OnnxModel& model, const std::map<std::string, int64_t>& dims) {
  std::vector<ir::TensorType> out;
  for (const OnnxValueInfo& in : model.inputs()) {
    const std::string name = printable_quoted(in.name);
    TESSERA_CHECK(in.is_tensor && in.elem_type != 0 && in.dims,
                  "{}: input {} has no declared tensor type; pass its type", model.source(), name);
    ir::TensorType t;
    t.dtype = require_dtype(in.elem_type, model.source() + ": input " + name);
    for (size_t d = 0; d < in.dims->size(); ++d) {
      const OnnxDim& dim = (*in.dims)[d];
      if (dim.size) {
        TESSERA_CHECK(*dim.size >= 0, "{}: input {} dimension {} is declared {}", model.source(), name, d, *dim.size);
        t.shape.push_back(*dim.size);
        continue;
      }
      auto it = dims.find(dim.param);
      TESSERA_CHECK(!dim.param.empty() && it != dims.end(),
                    "{}: input {} dimension {} is dynamic ({}); give inputs to bind it", model.source(), name, d,
                    dim.param.empty() ? std::string("unnamed") : printable_quoted(dim.param));
      t.shape.push_back(it->second);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tessera::io::onnx
