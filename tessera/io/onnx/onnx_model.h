#pragma once
// An ONNX model file, parsed and checked: the protobuf parses, the graph imports the default operator
// set, every value is defined once, every node reads values that an input, an initializer or an
// earlier node defines, the nodes form no cycle, and every stored initializer holds exactly the bytes
// its dtype and shape need. The summary accessors serve `tessera inspect`; import_onnx (onnx_import.h)
// turns the model into a graph.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/core/shape.h"

namespace tessera::io::onnx {

// One dimension of a declared input or output: a size, a named dynamic size (dim_param) or unknown.
struct OnnxDim {
  std::optional<int64_t> size;
  std::string param;  // "" when the size is known or the dimension is anonymous
};

struct OnnxValueInfo {
  std::string name;
  int64_t elem_type = 0;               // ONNX TensorProto.DataType; 0 when not a tensor or not declared
  bool is_tensor = true;               // false for sequences, maps, optionals
  std::optional<std::vector<OnnxDim>> dims;  // nullopt when the rank is not declared
};

struct OnnxInitializerInfo {
  std::string name;
  int64_t elem_type = 0;
  Shape shape;
  bool external = false;  // data in a file beside the model
};

class OnnxModel {
 public:
  struct Impl;
  explicit OnnxModel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

  const std::string& source() const;  // the path, or the label of an in-memory model
  const std::string& folder() const;  // where external data is read from ("" for in-memory models)
  int64_t ir_version() const;
  // The imported version of an operator set ("" is the default domain, ai.onnx); nullopt if not imported.
  std::optional<int64_t> opset(const std::string& domain = "") const;
  std::map<std::string, int64_t> opsets() const;
  std::string producer() const;  // "pytorch 2.0" or ""
  std::string graph_name() const;
  // The graph's inputs that are not initializers, in order: what a caller binds.
  const std::vector<OnnxValueInfo>& inputs() const;
  const std::vector<OnnxValueInfo>& outputs() const;
  std::vector<OnnxInitializerInfo> initializers() const;
  // Node count per operator ("Conv" -> 53; other domains as "com.microsoft.FusedConv").
  std::map<std::string, int64_t> op_histogram() const;
  size_t node_count() const;

  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

// Reads and checks a .onnx file; external data is resolved against the file's folder.
OnnxModel load_onnx_model(const std::string& path);
// The same for bytes in memory; `what` names them in errors, `folder` ("" refuses external data) is
// where external data files live.
OnnxModel parse_onnx_model(const uint8_t* data, size_t size, const std::string& what, const std::string& folder = "");

}  // namespace tessera::io::onnx
