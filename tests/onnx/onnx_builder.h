#pragma once
// Builds small ONNX models in tests with ONNX's generated protobuf classes, so that each test states
// the exact model (and the exact corruption) it feeds the importer.
#include <onnx/onnx_pb.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "tessera/io/onnx/onnx_model.h"
#include "tessera/io/onnx/onnx_tensor.h"

namespace tessera::test {

using Dim = std::variant<int64_t, std::string>;  // a size or a dim_param

struct ModelBuilder {
  ::onnx::ModelProto model;

  explicit ModelBuilder(int64_t opset = 13) {
    model.set_ir_version(8);
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model.mutable_graph()->set_name("test");
  }
  ::onnx::GraphProto& graph() { return *model.mutable_graph(); }

  static void set_type(::onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<Dim>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();
    for (const Dim& d : dims) {
      auto* dim = shape->add_dim();
      if (std::holds_alternative<int64_t>(d)) dim->set_dim_value(std::get<int64_t>(d));
      else dim->set_dim_param(std::get<std::string>(d));
    }
  }
  ModelBuilder& input(const std::string& name, const std::vector<Dim>& dims, int elem = ::onnx::TensorProto::FLOAT) {
    set_type(graph().add_input(), name, elem, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem = ::onnx::TensorProto::FLOAT) {
    auto* v = graph().add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    return *this;
  }
  ::onnx::TensorProto& initializer(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<float>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return *t;
  }
  ::onnx::TensorProto& int_initializer(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *t;
  }
  ::onnx::NodeProto& node(const std::string& op, std::initializer_list<std::string> inputs,
                          std::initializer_list<std::string> outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  std::string bytes() const { return model.SerializeAsString(); }
  io::onnx::OnnxModel parse(const std::string& folder = "") const {
    const std::string b = bytes();
    return io::onnx::parse_onnx_model(reinterpret_cast<const uint8_t*>(b.data()), b.size(), "test.onnx", folder);
  }
};

inline void set_int(::onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void set_ints(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (const int64_t x : v) a->add_ints(x);
}
inline void set_string(::onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace tessera::test
