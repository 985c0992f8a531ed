#include "tessera/io/onnx/onnx_summary.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/core/printable.h"
#include "tessera/io/onnx/onnx_dtype.h"

namespace tessera::io::onnx {

namespace {

std::string type_text(const OnnxValueInfo& v) {
  if (!v.is_tensor) return "(not a tensor)";
  std::string out = v.elem_type == 0 ? "?" : onnx_type_name(v.elem_type);
  if (!v.dims) return out + "[rank unknown]";
  std::vector<std::string> dims;
  for (const OnnxDim& d : *v.dims) {
    dims.push_back(d.size ? std::to_string(*d.size) : d.param.empty() ? "?" : printable(d.param, 32));
  }
  return out + "[" + fmt::format("{}", fmt::join(dims, ", ")) + "]";
}

}  // namespace

std::string describe_onnx_model(const OnnxModel& model) {
  std::string out = fmt::format("onnx: IR version {}, {} nodes", model.ir_version(), model.node_count());
  const std::string producer = model.producer();
  if (!producer.empty()) out += ", produced by " + printable(producer, 80);
  out += "\nopsets:";
  for (const auto& [domain, version] : model.opsets()) {
    out += fmt::format(" {}={}", domain.empty() ? "ai.onnx" : printable(domain, 60), version);
  }
  out += "\ninputs:\n";
  for (const auto& v : model.inputs()) out += fmt::format("  {:<32} {}\n", printable(v.name, 64), type_text(v));
  out += "outputs:\n";
  for (const auto& v : model.outputs()) out += fmt::format("  {:<32} {}\n", printable(v.name, 64), type_text(v));
  const std::vector<OnnxInitializerInfo> inits = model.initializers();
  int64_t values = 0;
  out += fmt::format("initializers: {}\n", inits.size());
  for (const auto& init : inits) {
    const int64_t n = shape_numel(init.shape);
    values += n;
    out += fmt::format("  {:<40} {:<8} {}{}\n", printable(init.name, 64), onnx_type_name(init.elem_type),
                       shape_str(init.shape), init.external ? " (external)" : "");
  }
  out += fmt::format("  total {} values\n", values);
  // Most frequent first, ties by name.
  const auto hist = model.op_histogram();
  std::vector<std::pair<std::string, int64_t>> ops(hist.begin(), hist.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  out += "ops:\n";
  for (const auto& [op, count] : ops) out += fmt::format("  {:<32} {}\n", printable(op, 64), count);
  return out;
}

}  // namespace tessera::io::onnx
