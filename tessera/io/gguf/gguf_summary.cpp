#include "tessera/io/gguf/gguf_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tessera/core/printable.h"
#include "tessera/io/value_summary.h"

namespace tessera::io::gguf {

namespace {

std::string ne_str(const std::vector<int64_t>& ne) {
  return fmt::format("[{}]", fmt::join(ne, ", "));
}

// Keys and tensor names as printed: escaped (a name must not move the cursor or forge lines) and cut
// at kNameColumn characters, so that one long name cannot widen every line: the output stays linear in
// the size of the file.
constexpr size_t kNameColumn = 64;

std::string column_text(const std::string& s) {
  return printable(s, kNameColumn);
}

size_t column_width(const std::vector<std::string>& texts, size_t at_least) {
  size_t width = at_least;
  for (const std::string& t : texts) width = std::max(width, t.size());
  return std::min(width, kNameColumn + 3);  // + "..."
}

}  // namespace

std::string describe_file(const Reader& r, size_t max_items) {
  std::string out = fmt::format("GGUF v{}: {} ({} bytes), alignment {}, tensor data at offset {}\n", r.version(),
                                r.source(), r.file_size(), r.alignment(), r.data_offset());
  out += fmt::format("metadata ({}):\n", r.metadata().size());
  std::vector<std::string> keys;
  for (const auto& kv : r.metadata()) keys.push_back(column_text(kv.first));
  const size_t key_width = column_width(keys, 0);
  for (size_t i = 0; i < keys.size(); ++i) {
    const Value& value = r.metadata()[i].second;
    out += fmt::format("  {:<{}}  {:<6}  {}\n", keys[i], key_width, value_type_name(value.type()),
                       value.to_string(max_items));
  }
  int64_t params = 0;
  uint64_t bytes = 0;
  std::map<std::string, int> per_type;
  std::vector<std::string> names;
  for (const TensorInfo& t : r.tensors()) {
    params += t.numel();
    bytes += t.nbytes;
    ++per_type[quant::type_name(t.type)];
    names.push_back(column_text(t.name));
  }
  const size_t name_width = column_width(names, 4);
  out += fmt::format("tensors ({}): {} values, {} bytes\n", r.tensors().size(), params, bytes);
  if (!per_type.empty()) {
    std::string types;
    for (const auto& [name, count] : per_type) types += fmt::format("{}{} x{}", types.empty() ? "" : ", ", name, count);
    out += "  types: " + types + "\n";
    out += fmt::format("  {:<{}}  {:<6} {:<22} {:>12} {:>12}\n", "name", name_width, "type", "ne", "bytes", "offset");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const TensorInfo& t = r.tensors()[i];
    out += fmt::format("  {:<{}}  {:<6} {:<22} {:>12} {:>12}\n", names[i], name_width, quant::type_name(t.type),
                       ne_str(t.ne), t.nbytes, r.data_offset() + t.offset);
  }
  return out;
}

std::string describe_tensor(const Reader& r, const TensorInfo& t) {
  std::string out =
      fmt::format("tensor {}\n  type    {}\n  ne      {} (row-major shape {})\n  bytes   {}\n  offset  {}\n", printable(t.name),
                  quant::type_name(t.type), ne_str(t.ne), shape_str(t.shape()), t.nbytes, r.data_offset() + t.offset);
  if (!quant::type_traits(t.type).can_dequantize) return out + "  (Tessera cannot decode this type)\n";
  return out + describe_values(r.dequantize(t));
}

}  // namespace tessera::io::gguf
