#include "tessera/io/onnx/onnx_model.h"

#include <filesystem>
#include <unordered_set>

#include "tessera/core/atomic_file.h"
#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/io/onnx/graph_check.h"
#include "tessera/io/onnx/model_impl.h"
#include "tessera/io/onnx/tensor_proto.h"

namespace tessera::io::onnx {

namespace {

OnnxValueInfo value_info_of(const pb::ValueInfoProto& info) {
  OnnxValueInfo out;
  out.name = info.name();
  if (!info.has_type()) return out;
  if (!info.type().has_tensor_type()) {
    out.is_tensor = false;
    return out;
  }
  const auto& tensor = info.type().tensor_type();
  out.elem_type = tensor.elem_type();
  if (!tensor.has_shape()) return out;
  std::vector<OnnxDim> dims;
  for (const auto& d : tensor.shape().dim()) {
    OnnxDim dim;
    if (d.has_dim_value()) dim.size = d.dim_value();
    else if (d.has_dim_param()) dim.param = d.dim_param();
    dims.push_back(std::move(dim));
  }
  out.dims = std::move(dims);
  return out;
}

void check_opsets(const pb::ModelProto& proto, const std::string& source) {
  std::unordered_set<std::string> seen;
  for (const auto& op : proto.opset_import()) {
    const std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    TESSERA_CHECK(seen.insert(domain).second, "{}: operator set {} is imported twice", source,
                  printable_quoted(op.domain()));
    TESSERA_CHECK(op.version() >= 1, "{}: operator set {} has version {}, expected at least 1", source,
                  printable_quoted(op.domain()), op.version());
  }
  // IR version 3 introduced opset_import; older files use the first default opset.
  TESSERA_CHECK(seen.count("") != 0 || proto.ir_version() < 3,
                "{}: the model imports no default (ai.onnx) operator set", source);
}

}  // namespace

std::string describe_node(const pb::NodeProto& node, int index) {
  const std::string op = node.domain().empty() || node.domain() == "ai.onnx"
                             ? node.op_type()
                             : node.domain() + "." + node.op_type();
  if (node.name().empty()) return fmt::format("node {} ({})", index, printable(op, 60));
  return fmt::format("node {} {} ({})", index, printable_quoted(node.name(), 80), printable(op, 60));
}

OnnxModel parse_onnx_model(const uint8_t* data, size_t size, const std::string& what, const std::string& folder) {
  TESSERA_CHECK(size <= static_cast<size_t>(INT32_MAX),
                "{}: {} bytes is over protobuf's 2 GiB limit for one message; store the weights as external data",
                what, size);
  auto impl = std::make_shared<OnnxModel::Impl>();
  impl->source = what;
  impl->folder = folder;
  TESSERA_CHECK(impl->proto.ParseFromArray(data, static_cast<int>(size)),
                "{}: not a valid ONNX model (the protobuf does not parse; {} bytes)", what, size);
  const pb::ModelProto& proto = impl->proto;
  TESSERA_CHECK(proto.has_graph(), "{}: the model has no graph", what);
  check_opsets(proto, what);
  impl->node_order = check_graph(proto.graph(), what);
  std::unordered_set<std::string> initialized;
  for (const auto& init : proto.graph().initializer()) initialized.insert(init.name());
  for (const auto& in : proto.graph().input()) {
    if (initialized.count(in.name()) == 0) impl->inputs.push_back(value_info_of(in));
  }
  for (const auto& out : proto.graph().output()) impl->outputs.push_back(value_info_of(out));
  return OnnxModel(std::move(impl));
}

OnnxModel load_onnx_model(const std::string& path) {
  const MappedFile file(path);
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  return parse_onnx_model(file.data(), file.size(), path, folder);
}

const std::string& OnnxModel::source() const { return impl_->source; }
const std::string& OnnxModel::folder() const { return impl_->folder; }
int64_t OnnxModel::ir_version() const { return impl_->proto.ir_version(); }
std::string OnnxModel::producer() const {
  const auto& p = impl_->proto;
  if (p.producer_version().empty()) return p.producer_name();
  return p.producer_name() + " " + p.producer_version();
}
std::string OnnxModel::graph_name() const { return impl_->proto.graph().name(); }
const std::vector<OnnxValueInfo>& OnnxModel::inputs() const { return impl_->inputs; }
const std::vector<OnnxValueInfo>& OnnxModel::outputs() const { return impl_->outputs; }
size_t OnnxModel::node_count() const { return static_cast<size_t>(impl_->proto.graph().node_size()); }

std::optional<int64_t> OnnxModel::opset(const std::string& domain) const {
  const std::string wanted = domain == "ai.onnx" ? "" : domain;
  for (const auto& op : impl_->proto.opset_import()) {
    if ((op.domain() == "ai.onnx" ? "" : op.domain()) == wanted) return op.version();
  }
  if (wanted.empty() && impl_->proto.ir_version() < 3) return 1;
  return std::nullopt;
}

std::map<std::string, int64_t> OnnxModel::opsets() const {
  std::map<std::string, int64_t> out;
  for (const auto& op : impl_->proto.opset_import()) out[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  return out;
}

std::vector<OnnxInitializerInfo> OnnxModel::initializers() const {
  std::vector<OnnxInitializerInfo> out;
  for (const auto& init : impl_->proto.graph().initializer()) {
    OnnxInitializerInfo info;
    info.name = init.name();
    info.elem_type = init.data_type();
    info.shape = tensor_proto_shape(init, init.name());
    info.external = init.data_location() == pb::TensorProto::EXTERNAL;
    out.push_back(std::move(info));
  }
  return out;
}

std::map<std::string, int64_t> OnnxModel::op_histogram() const {
  std::map<std::string, int64_t> out;
  for (const auto& node : impl_->proto.graph().node()) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    ++out[default_domain ? node.op_type() : node.domain() + "." + node.op_type()];
  }
  return out;
}

}  // namespace tessera::io::onnx
