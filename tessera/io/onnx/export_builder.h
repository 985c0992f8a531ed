#pragma once
// The ONNX graph under construction, for the exporter's own files: fresh value names, nodes with
// their attributes, initializers, and the small patterns every lowering needs (casts, reshapes,
// 1-D index constants). Each value carries its Tessera type, so lowerings can check what they build.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/io/onnx/onnx_proto.h"

namespace tessera::io::onnx {

/// A value of the ONNX graph: its name and Tessera type. An empty name is an omitted optional input.
struct OVal {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

/// Sets an INT attribute of a node.
void attr_int(pb::NodeProto& n, const std::string& name, int64_t v);
/// Sets an INTS attribute of a node.
void attr_ints(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
/// Sets a FLOAT attribute of a node (stored as float, as ONNX does).
void attr_float(pb::NodeProto& n, const std::string& name, double v);
/// Sets a STRING attribute of a node.
void attr_string(pb::NodeProto& n, const std::string& name, const std::string& v);

/// Sets a node's attributes once the node exists.
using AttrSetter = std::function<void(pb::NodeProto&)>;

/// The ONNX graph being built by the export.
class GraphBuilder {
 public:
  explicit GraphBuilder(pb::GraphProto& graph) : g_(graph) {}

  // A name not used yet, from a hint (names from the Tessera graph keep theirs when free).
  std::string fresh(const std::string& hint);
  // Claims `name` exactly (graph inputs and outputs); fails if it is taken.
  void claim(const std::string& name);

  // One node with one output of the given type.
  OVal op(const std::string& op_type, const std::vector<OVal>& in, DType dtype, const Shape& shape,
          const AttrSetter& attrs = {});
  // One node with several outputs.
  std::vector<OVal> op_multi(const std::string& op_type, const std::vector<OVal>& in,
                             const std::vector<std::pair<DType, Shape>>& outs, const AttrSetter& attrs = {});

  // An initializer holding `value` (named from the hint).
  OVal constant(const Array& value, const std::string& hint = "const");
  OVal i64s(const std::vector<int64_t>& v);         // 1-D int64 constant
  OVal scalar(double v, DType dtype);               // rank-0 constant

  OVal cast(const OVal& x, DType to);               // Cast unless already of that dtype
  OVal reshape(const OVal& x, const Shape& shape);  // Reshape unless already of that shape
  OVal expand(const OVal& x, const Shape& shape);   // Expand (NumPy broadcasting) unless equal
  OVal identity(const OVal& x, const std::string& name);  // Identity into an exact name

  pb::GraphProto& graph() { return g_; }

 private:
  pb::GraphProto& g_;
  std::set<std::string> used_;
  int64_t counter_ = 0;
};

// Fills a TensorProto with a name, dtype, shape and raw little-endian bytes.
void fill_tensor(pb::TensorProto& t, const std::string& name, const Array& value);

// The ONNX tensor type of a value.
void set_value_info(pb::ValueInfoProto& vi, const std::string& name, DType dtype, const Shape& shape);

}  // namespace tessera::io::onnx
