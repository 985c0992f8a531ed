#include "tessera/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "tessera/core/printable.h"
#include "tessera/io/atomic_file.h"

namespace tessera::io {

// Tensor bytes are copied as they are; a big-endian host would need byte swaps everywhere.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

using nlohmann::json;

namespace {

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypeNames[] = {{DType::f64, "F64"},   {DType::f32, "F32"}, {DType::f16, "F16"},
                                     {DType::bf16, "BF16"}, {DType::i64, "I64"}, {DType::i32, "I32"},
                                     {DType::i8, "I8"},     {DType::u8, "U8"},   {DType::boolean, "BOOL"}};
constexpr const char* kDTypeList = "F64, F32, F16, BF16, I64, I32, I8, U8, BOOL";
constexpr const char* kMetadataKey = "__metadata__";

// Quotes and escapes a string for JSON; nlohmann rejects invalid UTF-8, which we report by role.
std::string json_quote(const std::string& s, const char* role) {
  try {
    return json(s).dump();
  } catch (const json::exception&) {
    fail("save_safetensors: {} '{}' is not valid UTF-8", role, printable(s, 96));
  }
}

// --- writing -------------------------------------------------------------------------------------

struct PlannedTensor {
  const std::string* name;
  Array data;  // contiguous
};

// Validates the inputs and returns the padded JSON header and the tensors in file order.
std::string plan_file(const StateDict& tensors, const std::map<std::string, std::string>& metadata,
                      std::vector<PlannedTensor>* planned) {
  for (const auto& [name, array] : tensors) {
    TESSERA_CHECK(name != kMetadataKey, "save_safetensors: '{}' is reserved for metadata and cannot name a tensor",
                  kMetadataKey);
    TESSERA_CHECK(array.defined(), "save_safetensors: tensor '{}' is an undefined array", name);
  }
  std::string header = "{";
  if (!metadata.empty()) {
    header += json_quote(kMetadataKey, "key") + ":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      if (!first) header += ",";
      first = false;
      header += json_quote(key, "metadata key") + ":" + json_quote(value, "metadata value");
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (const auto& [name, array] : tensors) {
    if (header.size() > 1) header += ",";
    Array c = array.contiguous();
    const uint64_t end = offset + c.nbytes();
    std::string shape;
    for (size_t i = 0; i < c.shape().size(); ++i) shape += (i ? "," : "") + std::to_string(c.shape()[i]);
    header += fmt::format("{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                          json_quote(name, "tensor name"), safetensors_dtype_name(c.dtype()), shape, offset, end);
    offset = end;
    planned->push_back({&name, std::move(c)});
  }
  header += "}";
  // Spaces are JSON whitespace, so padding keeps the header valid while aligning the data section.
  header.append((8 - header.size() % 8) % 8, ' ');
  return header;
}

std::string length_prefix(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// --- reading -------------------------------------------------------------------------------------

struct Entry {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

const char* json_type(const json& j) {
  return j.type_name();
}

// Names from the file, escaped and cut short for messages.
std::string shown(const std::string& name) {
  return printable(name, 96);
}

// A short excerpt of an untrusted JSON value for messages: scalars in full (strings cut short),
// containers with their first few members and nested containers elided, so that neither the size nor
// the depth of the header reaches the message (nlohmann's dump() recurses).
std::string excerpt(const json& j) {
  const auto scalar = [](const json& v) -> std::string {
    if (v.is_string()) return printable_quoted(v.get_ref<const std::string&>(), 48);
    if (v.is_array()) return v.empty() ? "[]" : "[...]";
    if (v.is_object()) return v.empty() ? "{}" : "{...}";
    return v.dump();
  };
  if (!j.is_array() && !j.is_object()) return scalar(j);
  constexpr size_t kShown = 8;
  std::string out = j.is_array() ? "[" : "{";
  size_t i = 0;
  for (auto it = j.begin(); it != j.end(); ++it, ++i) {
    if (i == kShown) {
      out += fmt::format(", ... ({} in all)", j.size());
      break;
    }
    if (i > 0) out += ", ";
    if (j.is_object()) out += printable_quoted(it.key(), 48) + ": ";
    out += scalar(*it);
  }
  return out + (j.is_array() ? "]" : "}");
}

// The header is one JSON object, optionally padded with spaces. A NUL byte would end nlohmann's input
// early (hiding whatever follows it), so any byte other than a space after the object is refused here.
void check_header_padding(const char* begin, const char* end, const std::string& what) {
  if (const void* nul = std::memchr(begin, '\0', static_cast<size_t>(end - begin))) {
    fail("{}: the header has a NUL byte at header offset {}; a header is JSON text padded only with spaces", what,
         static_cast<const char*>(nul) - begin);
  }
  const char* last = end;
  while (last > begin && last[-1] == ' ') --last;
  if (last > begin && last[-1] != '}') {
    fail("{}: the header is not valid JSON: after the closing '}}' only spaces may pad it, found {} at header offset {}",
         what, printable_quoted(std::string_view(last - 1, 1)), last - 1 - begin);
  }
}

// Parses the header, rejecting duplicate keys at any level (nlohmann would keep the last silently) and
// nesting deeper than kSafetensorsMaxJsonDepth (before the deep value is built).
json parse_header_json(const char* begin, const char* end, const std::string& what) {
  check_header_padding(begin, end, what);
  std::vector<std::set<std::string>> keys;
  auto on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) {
      if (depth >= kSafetensorsMaxJsonDepth) {
        fail("{}: the header nests JSON arrays and objects more than {} levels deep", what, kSafetensorsMaxJsonDepth);
      }
    }
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == json::parse_event_t::key && !keys.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!keys.back().insert(key).second) {
        if (keys.size() == 1) fail("{}: duplicate tensor name '{}' in the header", what, shown(key));
        fail("{}: duplicate key '{}' in the header", what, shown(key));
      }
    }
    return true;
  };
  try {
    return json::parse(begin, end, on_event);
  } catch (const json::exception& e) {
    fail("{}: the header is not valid JSON: {}", what, printable(e.what()));
  }
}

uint64_t read_u64(const json& j, const std::string& what, const std::string& tensor, const char* field) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer()) fail("{}: tensor '{}': {} must not be negative, got {}", what, tensor, field, j.dump());
  fail("{}: tensor '{}': {} must hold non-negative integers, got {} {}", what, tensor, field, json_type(j),
       excerpt(j));
}

Entry parse_entry(const std::string& full_name, const json& j, const std::string& what) {
  const std::string name = shown(full_name);  // for messages
  TESSERA_CHECK(j.is_object(), "{}: tensor '{}': expected an object with dtype, shape and data_offsets, got {}", what,
                name, json_type(j));
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    TESSERA_CHECK(j.contains(field), "{}: tensor '{}': missing field '{}'", what, name, field);
  }
  Entry e;
  e.name = full_name;
  const json& dtype = j.at("dtype");
  TESSERA_CHECK(dtype.is_string(), "{}: tensor '{}': dtype must be a string, got {}", what, name, json_type(dtype));
  e.dtype = parse_safetensors_dtype(dtype.get<std::string>(), fmt::format("{}: tensor '{}'", what, name));

  const json& shape = j.at("shape");
  TESSERA_CHECK(shape.is_array(), "{}: tensor '{}': shape must be an array, got {}", what, name, json_type(shape));
  // Strides multiply the non-zero dimensions, so those must not overflow even when a zero makes numel 0.
  int64_t numel = 1, extent = 1;
  for (const json& d : shape) {
    const uint64_t dim = read_u64(d, what, name, "shape");
    TESSERA_CHECK(dim <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                  "{}: tensor '{}': dimension {} is too large", what, name, dim);
    e.shape.push_back(static_cast<int64_t>(dim));
    TESSERA_CHECK(!__builtin_mul_overflow(extent, std::max<int64_t>(e.shape.back(), 1), &extent),
                  "{}: tensor '{}': the element count of shape {} overflows 64 bits", what, name, excerpt(shape));
    numel *= e.shape.back();
  }
  uint64_t nbytes = 0;
  TESSERA_CHECK(!__builtin_mul_overflow(static_cast<uint64_t>(numel), dtype_size(e.dtype), &nbytes),
                "{}: tensor '{}': the byte size of shape {} overflows 64 bits", what, name, excerpt(shape));

  const json& offsets = j.at("data_offsets");
  TESSERA_CHECK(offsets.is_array() && offsets.size() == 2,
                "{}: tensor '{}': data_offsets must be an array [begin, end], got {}", what, name, excerpt(offsets));
  e.begin = read_u64(offsets[0], what, name, "data_offsets");
  e.end = read_u64(offsets[1], what, name, "data_offsets");
  TESSERA_CHECK(e.begin <= e.end, "{}: tensor '{}': data_offsets [{}, {}] end before they begin", what, name, e.begin,
                e.end);
  TESSERA_CHECK(e.end - e.begin == nbytes,
                "{}: tensor '{}': {}{} needs {} bytes but data_offsets [{}, {}] span {} bytes", what, name,
                safetensors_dtype_name(e.dtype), shape_str(e.shape), nbytes, e.begin, e.end, e.end - e.begin);
  return e;
}

void parse_metadata(const json& j, const std::string& what, std::map<std::string, std::string>* out) {
  TESSERA_CHECK(j.is_object(), "{}: {} must be an object of strings, got {}", what, kMetadataKey, json_type(j));
  for (const auto& [key, value] : j.items()) {
    TESSERA_CHECK(value.is_string(), "{}: {} entry '{}' must be a string, got {} {}", what, kMetadataKey, shown(key),
                  json_type(value), excerpt(value));
    (*out)[key] = value.get<std::string>();
  }
}

// The tensors must tile the data section exactly: sorted by offset, each begins where the previous
// one ended, and the last ends at the end of the file (as the reference implementation requires).
void check_coverage(std::vector<const Entry*> entries, uint64_t data_size, const std::string& what) {
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : entries) {
    if (e->begin < expected) {
      fail("{}: tensor '{}': data_offsets [{}, {}] overlap tensor '{}' (which ends at {})", what, shown(e->name),
           e->begin, e->end, shown(previous->name), expected);
    }
    if (e->begin > expected) {
      fail("{}: tensor '{}': data_offsets [{}, {}] leave a gap: expected it to begin at {} ({})", what, shown(e->name),
           e->begin, e->end, expected,
           previous ? fmt::format("where tensor '{}' ends", shown(previous->name)) : std::string("the start of the data"));
    }
    expected = e->end;
    previous = e;
  }
  if (expected < data_size) {
    fail("{}: the tensors cover {} of the {} data bytes; expected the last tensor to end at the end of the file", what,
         expected, data_size);
  }
  if (expected > data_size) {
    fail(
        "{}: tensor '{}': data_offsets [{}, {}] reach past the end of the data section ({} bytes; is the file "
        "truncated?)",
        what, shown(previous->name), previous->begin, previous->end, data_size);
  }
}

}  // namespace

const char* safetensors_dtype_name(DType dtype) {
  for (const DTypeName& d : kDTypeNames) {
    if (d.dtype == dtype) return d.name;
  }
  fail("safetensors: no name for dtype {}", dtype_name(dtype));
}

DType parse_safetensors_dtype(const std::string& name, const std::string& what) {
  for (const DTypeName& d : kDTypeNames) {
    if (name == d.name) return d.dtype;
  }
  fail("{}: unknown or unsupported dtype '{}' (expected one of {})", what, printable(name, 48), kDTypeList);
}

std::string serialize_safetensors(const StateDict& tensors, const std::map<std::string, std::string>& metadata) {
  std::vector<PlannedTensor> planned;
  const std::string header = plan_file(tensors, metadata, &planned);
  std::string out = length_prefix(header.size()) + header;
  for (const PlannedTensor& t : planned) out.append(static_cast<const char*>(t.data.raw_data()), t.data.nbytes());
  return out;
}

void save_safetensors(const std::string& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<PlannedTensor> planned;
  const std::string header = plan_file(tensors, metadata, &planned);
  // Stream tensor by tensor: no second in-memory copy of the checkpoint.
  write_file_atomic(path, [&](AtomicFile& file) {
    file.write(length_prefix(header.size()));
    file.write(header);
    for (const PlannedTensor& t : planned) file.write(t.data.raw_data(), t.data.nbytes());
  });
}

SafetensorsHeader read_safetensors_header(const uint8_t* data, size_t size, const std::string& what) {
  TESSERA_CHECK(size >= 8, "{}: {} bytes is too short for the 8-byte header length that starts a safetensors file",
                what, size);
  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<uint64_t>(data[i]) << (8 * i);
  TESSERA_CHECK(header_len <= size - 8,
                "{}: the header length {} is larger than the {} bytes that follow it (truncated or not a "
                "safetensors file?)",
                what, header_len, size - 8);
  TESSERA_CHECK(header_len <= kSafetensorsMaxHeaderBytes, "{}: the header length {} exceeds the limit of {} bytes",
                what, header_len, kSafetensorsMaxHeaderBytes);
  const char* header = reinterpret_cast<const char*>(data + 8);
  TESSERA_CHECK(header_len > 0 && header[0] == '{', "{}: the header must be a JSON object starting with '{{'", what);
  const json root = parse_header_json(header, header + header_len, what);
  TESSERA_CHECK(root.is_object(), "{}: the header must be a JSON object, got {}", what, json_type(root));

  const uint64_t body_offset = 8 + header_len;
  const uint64_t body_size = size - body_offset;
  SafetensorsHeader out;
  std::vector<Entry> entries;
  for (const auto& [name, value] : root.items()) {
    if (name == kMetadataKey) {
      parse_metadata(value, what, &out.metadata);
    } else {
      entries.push_back(parse_entry(name, value, what));
    }
  }
  std::vector<const Entry*> order;
  for (const Entry& e : entries) order.push_back(&e);
  check_coverage(order, body_size, what);
  for (Entry& e : entries) {
    out.tensors.emplace(std::move(e.name),
                        SafetensorsEntry{e.dtype, std::move(e.shape), body_offset + e.begin, e.end - e.begin});
  }
  return out;
}

SafetensorsFile load_safetensors_from_memory(const uint8_t* data, size_t size, const std::string& what) {
  SafetensorsHeader header = read_safetensors_header(data, size, what);
  SafetensorsFile out;
  out.metadata = std::move(header.metadata);
  for (auto& [name, e] : header.tensors) {
    Array a = Array::empty(e.dtype, e.shape);
    if (a.nbytes() > 0) std::memcpy(a.raw_data(), data + e.offset, a.nbytes());
    if (e.dtype == DType::boolean) {
      // Only 0 and 1 are valid bool objects; normalise other bytes instead of creating invalid bools.
      uint8_t* p = static_cast<uint8_t*>(a.raw_data());
      for (int64_t i = 0; i < a.numel(); ++i) p[i] = p[i] != 0;
    }
    out.tensors.emplace(name, std::move(a));
  }
  return out;
}

StateDict load_safetensors(const std::string& path) {
  return load_safetensors_with_metadata(path).tensors;
}

SafetensorsFile load_safetensors_with_metadata(const std::string& path) {
  MappedFile file(path);
  return load_safetensors_from_memory(file.data(), file.size(), fmt::format("safetensors file '{}'", path));
}

}  // namespace tessera::io
