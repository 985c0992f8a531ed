#include "tessera/io/gguf/gguf_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace tessera::io::gguf {

namespace {

std::string ne_str(const std::vector<int64_t>& ne) {
  return fmt::format("[{}]", fmt::join(ne, ", "));
}

}  // namespace

std::string describe_file(const Reader& r, size_t max_items) {
  std::string out = fmt::format("GGUF v{}: {} ({} bytes), alignment {}, tensor data at offset {}\n", r.version(),
                                r.source(), r.file_size(), r.alignment(), r.data_offset());
  out += fmt::format("metadata ({}):\n", r.metadata().size());
  size_t key_width = 0;
  for (const auto& kv : r.metadata()) key_width = std::max(key_width, kv.first.size());
  for (const auto& [key, value] : r.metadata()) {
    out +=
        fmt::format("  {:<{}}  {:<6}  {}\n", key, key_width, value_type_name(value.type()), value.to_string(max_items));
  }
  int64_t params = 0;
  uint64_t bytes = 0;
  std::map<std::string, int> per_type;
  size_t name_width = 4;
  for (const TensorInfo& t : r.tensors()) {
    params += t.numel();
    bytes += t.nbytes;
    ++per_type[quant::type_name(t.type)];
    name_width = std::max(name_width, t.name.size());
  }
  out += fmt::format("tensors ({}): {} values, {} bytes\n", r.tensors().size(), params, bytes);
  if (!per_type.empty()) {
    std::string types;
    for (const auto& [name, count] : per_type) types += fmt::format("{}{} x{}", types.empty() ? "" : ", ", name, count);
    out += "  types: " + types + "\n";
    out += fmt::format("  {:<{}}  {:<6} {:<22} {:>12} {:>12}\n", "name", name_width, "type", "ne", "bytes", "offset");
  }
  for (const TensorInfo& t : r.tensors()) {
    out += fmt::format("  {:<{}}  {:<6} {:<22} {:>12} {:>12}\n", t.name, name_width, quant::type_name(t.type),
                       ne_str(t.ne), t.nbytes, r.data_offset() + t.offset);
  }
  return out;
}

std::string describe_tensor(const Reader& r, const TensorInfo& t) {
  std::string out =
      fmt::format("tensor {}\n  type    {}\n  ne      {} (row-major shape {})\n  bytes   {}\n  offset  {}\n", t.name,
                  quant::type_name(t.type), ne_str(t.ne), shape_str(t.shape()), t.nbytes, r.data_offset() + t.offset);
  if (!quant::type_traits(t.type).can_dequantize) return out + "  (Tessera cannot decode this type)\n";
  const Array values = r.dequantize(t);
  const float* v = values.data<const float>();
  const int64_t n = values.numel();
  if (n == 0) return out;
  double sum = 0, sq = 0;
  float lo = v[0], hi = v[0];
  int64_t non_finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) {
      ++non_finite;
      continue;
    }
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
    sum += v[i];
    sq += static_cast<double>(v[i]) * v[i];
  }
  const double count = static_cast<double>(std::max<int64_t>(1, n - non_finite));
  out += fmt::format("  values  min {:.6g}, max {:.6g}, mean {:.6g}, rms {:.6g}", lo, hi, sum / count,
                     std::sqrt(sq / count));
  if (non_finite > 0) out += fmt::format(", {} non-finite", non_finite);
  out += "\n  first  ";
  for (int64_t i = 0; i < std::min<int64_t>(n, 8); ++i) out += fmt::format(" {:.6g}", v[i]);
  return out + "\n";
}

}  // namespace tessera::io::gguf
