#include "tessera/io/onnx/external_data.h"

#include <cstring>
#include <filesystem>
#include <optional>

#include "tessera/core/atomic_file.h"
#include "tessera/core/error.h"
#include "tessera/core/parse_int.h"
#include "tessera/core/printable.h"

namespace tessera::io::onnx {
namespace fs = std::filesystem;

namespace {

uint64_t parse_size_field(const std::string& key, const std::string& text, const std::string& what) {
  return parse_uint_or_fail(text, UINT64_MAX, fmt::format("{}: external data '{}'", what, key));
}

bool is_inside(const fs::path& folder, const fs::path& path) {
  auto f = folder.begin(), p = path.begin();
  for (; f != folder.end(); ++f, ++p) {
    if (f->empty()) continue;  // a trailing separator
    if (p == path.end() || *f != *p) return false;
  }
  return true;
}

}  // namespace

std::string read_external_data(const pb::TensorProto& tensor, const std::string& what, const std::string& model_dir,
                               uint64_t expected_bytes) {
  std::optional<std::string> location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") location = entry.value();
    else if (entry.key() == "offset") offset = parse_size_field("offset", entry.value(), what);
    else if (entry.key() == "length") length = parse_size_field("length", entry.value(), what);
  }
  TESSERA_CHECK(location.has_value() && !location->empty(), "{}: external data without a 'location'", what);
  TESSERA_CHECK(!model_dir.empty(),
                "{}: external data ({}) needs the model's folder; load the model from a file, not from memory", what,
                printable_quoted(*location));
  TESSERA_CHECK(location->find('\0') == std::string::npos, "{}: external data location contains a NUL byte", what);
  const fs::path relative(*location);
  TESSERA_CHECK(relative.is_relative(), "{}: external data location {} is absolute; it must name a file inside {}", what,
                printable_quoted(*location), printable_quoted(model_dir));
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(fs::path(model_dir), ec);
  TESSERA_CHECK(!ec, "{}: cannot resolve the model's folder {}: {}", what, printable_quoted(model_dir), ec.message());
  const fs::path file = fs::weakly_canonical(folder / relative, ec);
  TESSERA_CHECK(!ec && is_inside(folder, file), "{}: external data location {} leaves the model's folder {}", what,
                printable_quoted(*location), printable_quoted(folder.string()));

  const MappedFile mapped(file.string());
  const uint64_t size = mapped.size();
  TESSERA_CHECK(offset <= size, "{}: external data offset {} is past the end of {} ({} bytes)", what, offset,
                printable_quoted(*location), size);
  const uint64_t available = size - offset;
  const uint64_t take = length.value_or(available);
  TESSERA_CHECK(take <= available, "{}: external data {} holds {} bytes from offset {}, the tensor asks for {}", what,
                printable_quoted(*location), available, offset, take);
  TESSERA_CHECK(take == expected_bytes, "{}: external data is {} bytes, its dtype and shape need {}", what, take,
                expected_bytes);
  std::string bytes(take, '\0');
  if (take > 0) std::memcpy(bytes.data(), mapped.data() + offset, take);
  return bytes;
}

}  // namespace tessera::io::onnx
