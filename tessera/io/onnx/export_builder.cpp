// The exporter's graph builder: names, nodes, initializers and the common small patterns.
#include "tessera/io/onnx/export_builder.h"

#include <fmt/format.h>

#include <cstring>

#include "tessera/core/error.h"
#include "tessera/io/onnx/onnx_dtype.h"

namespace tessera::io::onnx {

void attr_int(pb::NodeProto& n, const std::string& name, int64_t v) {
  pb::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INT);
  a->set_i(v);
}

void attr_ints(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  pb::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void attr_float(pb::NodeProto& n, const std::string& name, double v) {
  pb::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::FLOAT);
  a->set_f(static_cast<float>(v));
}

void attr_string(pb::NodeProto& n, const std::string& name, const std::string& v) {
  pb::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(pb::AttributeProto::STRING);
  a->set_s(v);
}

void fill_tensor(pb::TensorProto& t, const std::string& name, const Array& value) {
  t.set_name(name);
  t.set_data_type(static_cast<int32_t>(onnx_type_of(value.dtype())));
  for (int64_t d : value.shape()) t.add_dims(d);
  const Array c = value.contiguous();
  t.set_raw_data(std::string(static_cast<const char*>(c.raw_data()), c.nbytes()));
}

void set_value_info(pb::ValueInfoProto& vi, const std::string& name, DType dtype, const Shape& shape) {
  vi.set_name(name);
  pb::TypeProto_Tensor* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(onnx_type_of(dtype)));
  pb::TensorShapeProto* s = tt->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}

std::string GraphBuilder::fresh(const std::string& hint) {
  std::string base = hint.empty() ? "v" : hint;
  if (used_.insert(base).second) return base;
  for (;;) {
    std::string name = fmt::format("{}_{}", base, counter_++);
    if (used_.insert(name).second) return name;
  }
}

void GraphBuilder::claim(const std::string& name) {
  TESSERA_CHECK(!name.empty(), "onnx export: a graph input or output has an empty name");
  TESSERA_CHECK(used_.insert(name).second, "onnx export: the name '{}' is used twice (inputs and outputs need unique names)",
                name);
}

std::vector<OVal> GraphBuilder::op_multi(const std::string& op_type, const std::vector<OVal>& in,
                                         const std::vector<std::pair<DType, Shape>>& outs, const AttrSetter& attrs) {
  pb::NodeProto* n = g_.add_node();
  n->set_op_type(op_type);
  n->set_name(fresh(op_type));
  for (const OVal& v : in) n->add_input(v.name);
  std::vector<OVal> result;
  for (const auto& [dt, shape] : outs) {
    OVal v{fresh("t"), dt, shape};
    n->add_output(v.name);
    result.push_back(std::move(v));
  }
  if (attrs) attrs(*n);
  return result;
}

OVal GraphBuilder::op(const std::string& op_type, const std::vector<OVal>& in, DType dtype, const Shape& shape,
                      const AttrSetter& attrs) {
  return op_multi(op_type, in, {{dtype, shape}}, attrs).front();
}

OVal GraphBuilder::constant(const Array& value, const std::string& hint) {
  OVal v{fresh(hint), value.dtype(), value.shape()};
  fill_tensor(*g_.add_initializer(), v.name, value);
  return v;
}

OVal GraphBuilder::i64s(const std::vector<int64_t>& v) {
  return constant(Array::from_vector(v, {static_cast<int64_t>(v.size())}), "ints");
}

OVal GraphBuilder::scalar(double v, DType dtype) {
  return constant(Array::full(dtype, {}, v), "scalar");
}

OVal GraphBuilder::cast(const OVal& x, DType to) {
  if (x.dtype == to) return x;
  return op("Cast", {x}, to, x.shape, [to](pb::NodeProto& n) { attr_int(n, "to", onnx_type_of(to)); });
}

OVal GraphBuilder::reshape(const OVal& x, const Shape& shape) {
  if (x.shape == shape) return x;
  bool has_zero = false;
  for (int64_t d : shape) has_zero = has_zero || d == 0;
  // allowzero: a 0 in the shape means an empty axis, not "copy the input's size".
  return op("Reshape", {x, i64s(shape)}, x.dtype, shape, [has_zero](pb::NodeProto& n) {
    if (has_zero) attr_int(n, "allowzero", 1);
  });
}

OVal GraphBuilder::expand(const OVal& x, const Shape& shape) {
  if (x.shape == shape) return x;
  return op("Expand", {x, i64s(shape)}, x.dtype, shape);
}

OVal GraphBuilder::identity(const OVal& x, const std::string& name) {
  pb::NodeProto* n = g_.add_node();
  n->set_op_type("Identity");
  n->set_name(fresh("Identity"));
  n->add_input(x.name);
  n->add_output(name);
  return {name, x.dtype, x.shape};
}

}  // namespace tessera::io::onnx
