// GGUF parsing. A Cursor reads little-endian fields with a bounds check before every read and reports
// errors with the offset of the field being read; counts are checked against the bytes left before
// anything is allocated, so a hostile header cannot make the reader reserve memory it cannot fill.
#include "tessera/io/gguf/gguf_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/core/regular_file.h"
#include "tessera/quant/quantize.h"

namespace tessera::io::gguf {

// The mapped (or copied) bytes; Arrays viewing tensor data keep it alive through their owner.
struct Bytes {
  uint8_t* data = nullptr;
  size_t size = 0;
  bool mapped = false;
  std::vector<uint8_t> copy;
  ~Bytes() {
    if (mapped && data != nullptr) ::munmap(data, size);
  }
};

struct Reader::State {
  std::string source;
  std::shared_ptr<Bytes> bytes;
  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;
  std::vector<std::pair<std::string, Value>> metadata;
  std::unordered_map<std::string, size_t> key_index;
  std::vector<TensorInfo> tensors;
  std::unordered_map<std::string, size_t> tensor_index;
};

namespace {

class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const std::string& what) : data_(data), size_(size), what_(what) {}

  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }

  template <class... Args>
  [[noreturn]] void fail_at(size_t offset, fmt::format_string<Args...> f, Args&&... args) const {
    fail("{}: offset {}: {}", what_, offset, fmt::format(f, std::forward<Args>(args)...));
  }

  void need(size_t n, const char* thing) const {
    if (n > left()) {
      fail_at(pos_, "{} needs {} bytes but only {} remain (the file is truncated or the header is corrupt)", thing, n,
              left());
    }
  }

  template <class T>
  T read(const char* thing) {
    need(sizeof(T), thing);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(const char* thing) {
    const size_t at = pos_;
    const uint64_t len = read<uint64_t>(thing);
    if (len > left()) {
      fail_at(at, "{} has length {} but only {} bytes remain (truncated file or corrupt length)", thing, len, left());
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& what_;
};

// The fewest bytes one array element of `type` can occupy (for the count check).
size_t min_element_bytes(ValueType type) {
  if (type == ValueType::string) return 8;
  if (type == ValueType::array) return 12;
  return value_type_size(type);
}

ValueType read_value_type(Cursor& c, const char* thing) {
  const size_t at = c.pos();
  const uint32_t id = c.read<uint32_t>(thing);
  if (!is_valid_value_type(id)) c.fail_at(at, "{} is {}, not a GGUF value type (0-12)", thing, id);
  return static_cast<ValueType>(id);
}

Value read_value(Cursor& c, ValueType type, int depth);

template <class Stored, class Raw>
std::vector<Stored> read_numbers(Cursor& c, uint64_t count) {
  std::vector<Stored> out(static_cast<size_t>(count));
  for (Stored& x : out) x = static_cast<Stored>(c.read<Raw>("array element"));
  return out;
}

Value read_array(Cursor& c, int depth) {
  const size_t at = c.pos();
  if (depth >= kMaxArrayNesting) c.fail_at(at, "arrays nested deeper than {} levels", kMaxArrayNesting);
  const ValueType elem = read_value_type(c, "array element type");
  const uint64_t count = c.read<uint64_t>("array length");
  if (count > c.left() / min_element_bytes(elem)) {
    c.fail_at(at, "array of {} {} values cannot fit in the {} bytes left", count, value_type_name(elem), c.left());
  }
  switch (elem) {
    case ValueType::u8:
      return Value::unsigned_array(elem, read_numbers<uint64_t, uint8_t>(c, count));
    case ValueType::u16:
      return Value::unsigned_array(elem, read_numbers<uint64_t, uint16_t>(c, count));
    case ValueType::u32:
      return Value::unsigned_array(elem, read_numbers<uint64_t, uint32_t>(c, count));
    case ValueType::u64:
      return Value::unsigned_array(elem, read_numbers<uint64_t, uint64_t>(c, count));
    case ValueType::i8:
      return Value::signed_array(elem, read_numbers<int64_t, int8_t>(c, count));
    case ValueType::i16:
      return Value::signed_array(elem, read_numbers<int64_t, int16_t>(c, count));
    case ValueType::i32:
      return Value::signed_array(elem, read_numbers<int64_t, int32_t>(c, count));
    case ValueType::i64:
      return Value::signed_array(elem, read_numbers<int64_t, int64_t>(c, count));
    case ValueType::f32:
      return Value::f32_array(read_numbers<float, float>(c, count));
    case ValueType::f64:
      return Value::f64_array(read_numbers<double, double>(c, count));
    case ValueType::boolean: {
      std::vector<bool> v(static_cast<size_t>(count));
      for (size_t i = 0; i < v.size(); ++i) v[i] = read_value(c, ValueType::boolean, depth).as_bool();
      return Value::bool_array(std::move(v));
    }
    case ValueType::string: {
      std::vector<std::string> v(static_cast<size_t>(count));
      for (std::string& s : v) s = c.read_string("array string");
      return Value::string_array(std::move(v));
    }
    case ValueType::array: {
      std::vector<Value> v;
      v.reserve(static_cast<size_t>(count));
      for (uint64_t i = 0; i < count; ++i) v.push_back(read_array(c, depth + 1));
      return Value::array_of_arrays(std::move(v));
    }
  }
  c.fail_at(at, "unreachable array element type");
}

Value read_value(Cursor& c, ValueType type, int depth) {
  switch (type) {
    case ValueType::u8:
      return Value::u8(c.read<uint8_t>("u8 value"));
    case ValueType::i8:
      return Value::i8(c.read<int8_t>("i8 value"));
    case ValueType::u16:
      return Value::u16(c.read<uint16_t>("u16 value"));
    case ValueType::i16:
      return Value::i16(c.read<int16_t>("i16 value"));
    case ValueType::u32:
      return Value::u32(c.read<uint32_t>("u32 value"));
    case ValueType::i32:
      return Value::i32(c.read<int32_t>("i32 value"));
    case ValueType::u64:
      return Value::u64(c.read<uint64_t>("u64 value"));
    case ValueType::i64:
      return Value::i64(c.read<int64_t>("i64 value"));
    case ValueType::f32:
      return Value::f32(c.read<float>("f32 value"));
    case ValueType::f64:
      return Value::f64(c.read<double>("f64 value"));
    case ValueType::boolean: {
      const size_t at = c.pos();
      const uint8_t b = c.read<uint8_t>("bool value");
      if (b > 1) c.fail_at(at, "bool value is {}, expected 0 or 1", b);
      return Value::boolean(b == 1);
    }
    case ValueType::string:
      return Value::string(c.read_string("string value"));
    case ValueType::array:
      return read_array(c, depth);
  }
  c.fail_at(c.pos(), "unreachable value type");
}

TensorInfo read_tensor_info(Cursor& c, size_t index) {
  TensorInfo t;
  t.info_offset = c.pos();
  t.name = c.read_string("tensor name");
  const std::string label = fmt::format("tensor {} '{}'", index, printable(t.name, 96));
  const size_t dims_at = c.pos();
  const uint32_t n_dims = c.read<uint32_t>("tensor dimension count");
  if (n_dims > static_cast<uint32_t>(kMaxDims)) {
    c.fail_at(dims_at, "{} has {} dimensions; GGUF tensors have at most {}", label, n_dims, kMaxDims);
  }
  // The non-zero dimensions are bounded too, so that even an empty tensor has a shape Tessera's
  // arrays can hold.
  int64_t numel = 1, nonzero = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const size_t at = c.pos();
    const uint64_t ne = c.read<uint64_t>("tensor dimension");
    if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(numel, static_cast<int64_t>(ne), &numel) ||
        __builtin_mul_overflow(nonzero, std::max<int64_t>(1, static_cast<int64_t>(ne)), &nonzero) ||
        nonzero > kMaxTensorValues) {
      c.fail_at(at, "{}: dimension {} = {} makes the tensor larger than {} values", label, d, ne, kMaxTensorValues);
    }
    t.ne.push_back(static_cast<int64_t>(ne));
  }
  const size_t type_at = c.pos();
  const uint32_t type_id = c.read<uint32_t>("tensor type");
  const quant::TypeTraits* traits = quant::find_type(type_id);
  if (traits == nullptr) c.fail_at(type_at, "{} has unknown ggml type id {}", label, type_id);
  t.type = traits->type;
  if (t.row_length() % traits->block_size != 0) {
    c.fail_at(type_at, "{}: row length ne[0] = {} is not a multiple of the {} block size {}", label, t.row_length(),
              traits->name, traits->block_size);
  }
  // nbytes = numel / block_size * type_size, computed without overflow.
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel / traits->block_size),
                             static_cast<uint64_t>(traits->type_size), &nbytes)) {
    c.fail_at(type_at, "{}: its size in bytes overflows 64 bits", label);
  }
  t.nbytes = nbytes;
  t.offset = c.read<uint64_t>("tensor data offset");
  return t;
}

uint64_t align_up(uint64_t v, uint64_t alignment, bool* overflow) {
  const uint64_t rem = v % alignment;
  if (rem == 0) return v;
  uint64_t out = 0;
  *overflow = __builtin_add_overflow(v, alignment - rem, &out);
  return out;
}

void parse(Reader::State& s) {
  const uint8_t* data = s.bytes->data;
  const size_t size = s.bytes->size;
  Cursor c(data, size, s.source);

  const uint32_t magic = c.read<uint32_t>("magic");
  if (magic != kMagic) {
    c.fail_at(0, "not a GGUF file: the magic is {:02x} {:02x} {:02x} {:02x}, expected \"GGUF\"", data[0], data[1],
              data[2], data[3]);
  }
  s.version = c.read<uint32_t>("version");
  if (s.version != 2 && s.version != 3) {
    const char* hint = s.version == 1 ? " (GGUF v1 is obsolete)" : s.version > 0xFFFF ? " (a big-endian file?)" : "";
    c.fail_at(4, "GGUF version {} is not supported{}; expected 2 or 3", s.version, hint);
  }
  const uint64_t tensor_count = c.read<uint64_t>("tensor count");
  const uint64_t kv_count = c.read<uint64_t>("metadata count");
  // A tensor info needs at least 24 bytes (empty name, no dims), a metadata entry at least 13.
  if (kv_count > c.left() / 13) c.fail_at(16, "metadata count {} cannot fit in the {} bytes left", kv_count, c.left());
  if (tensor_count > c.left() / 24) {
    c.fail_at(8, "tensor count {} cannot fit in the {} bytes left", tensor_count, c.left());
  }

  s.metadata.reserve(static_cast<size_t>(kv_count));
  for (uint64_t i = 0; i < kv_count; ++i) {
    const size_t at = c.pos();
    std::string key = c.read_string("metadata key");
    if (s.key_index.count(key) != 0) c.fail_at(at, "duplicate metadata key '{}'", printable(key, 96));
    const ValueType type = read_value_type(c, "metadata value type");
    Value value = read_value(c, type, 0);
    s.key_index.emplace(key, s.metadata.size());
    s.metadata.emplace_back(std::move(key), std::move(value));
  }
  if (auto it = s.key_index.find("general.alignment"); it != s.key_index.end()) {
    const Value& v = s.metadata[it->second].second;
    if (v.type() != ValueType::u32) {
      c.fail_at(c.pos(), "general.alignment must be a u32, got {}", value_type_name(v.type()));
    }
    s.alignment = v.as_u64();
    if (s.alignment == 0 || (s.alignment & (s.alignment - 1)) != 0 || s.alignment > kMaxAlignment) {
      c.fail_at(c.pos(), "general.alignment = {} is not a power of two between 1 and {}", s.alignment, kMaxAlignment);
    }
  }

  s.tensors.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    TensorInfo t = read_tensor_info(c, static_cast<size_t>(i));
    if (s.tensor_index.count(t.name) != 0) {
      c.fail_at(t.info_offset, "duplicate tensor name '{}'", printable(t.name, 96));
    }
    s.tensor_index.emplace(t.name, s.tensors.size());
    s.tensors.push_back(std::move(t));
  }

  bool overflow = false;
  s.data_offset = align_up(c.pos(), s.alignment, &overflow);
  if (s.tensors.empty()) return;  // vocab-only files may end right after the header
  if (overflow || s.data_offset > size) {
    c.fail_at(c.pos(), "the data section would start at offset {} (aligned to {}), past the end of the {}-byte file",
              s.data_offset, s.alignment, size);
  }
  const uint64_t data_size = size - s.data_offset;
  for (const TensorInfo& t : s.tensors) {
    if (t.offset % s.alignment != 0) {
      c.fail_at(t.info_offset, "tensor '{}' has data offset {}, not a multiple of the alignment {}",
                printable(t.name, 96), t.offset, s.alignment);
    }
    if (t.offset > data_size || t.nbytes > data_size - t.offset) {
      c.fail_at(t.info_offset,
                "tensor '{}' ({} bytes at data offset {}, file offset {}) extends past the end of the data section "
                "({} bytes)",
                printable(t.name, 96), t.nbytes, t.offset, s.data_offset + t.offset, data_size);
    }
  }
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : s.tensors) {
    if (t.nbytes > 0) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& a = *by_offset[i - 1];
    const TensorInfo& b = *by_offset[i];
    if (a.offset + a.nbytes > b.offset) {
      c.fail_at(b.info_offset, "tensors '{}' (data offset {}, {} bytes) and '{}' (data offset {}) overlap",
                printable(a.name, 96), a.offset, a.nbytes, printable(b.name, 96), b.offset);
    }
  }
}

std::string errno_text(int err) {
  return std::strerror(err);
}

std::shared_ptr<Bytes> map_file(const std::string& path) {
  uint64_t size = 0;
  const int fd = open_regular_file(path, &size);
  auto bytes = std::make_shared<Bytes>();
  bytes->size = static_cast<size_t>(size);
  if (bytes->size > 0) {
    // Private and writable: pages written through a view are copied, the file never changes.
    void* p = ::mmap(nullptr, bytes->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail("cannot read '{}': mmap of {} bytes failed: {}", path, bytes->size, errno_text(err));
    }
    bytes->data = static_cast<uint8_t*>(p);
    bytes->mapped = true;
  }
  ::close(fd);
  return bytes;
}

Reader::State parse_bytes(std::shared_ptr<Bytes> bytes, const std::string& source) {
  Reader::State s;
  s.source = source;
  s.bytes = std::move(bytes);
  parse(s);
  return s;
}

}  // namespace

Reader Reader::open(const std::string& path) {
  return Reader(std::make_shared<const State>(parse_bytes(map_file(path), path)));
}

Reader Reader::from_memory(const uint8_t* data, size_t size, const std::string& what) {
  auto bytes = std::make_shared<Bytes>();
  bytes->copy.assign(data, data + size);
  bytes->data = bytes->copy.data();
  bytes->size = size;
  return Reader(std::make_shared<const State>(parse_bytes(std::move(bytes), what)));
}

const std::string& Reader::source() const {
  return state_->source;
}
uint32_t Reader::version() const {
  return state_->version;
}
uint64_t Reader::alignment() const {
  return state_->alignment;
}
uint64_t Reader::data_offset() const {
  return state_->data_offset;
}
uint64_t Reader::file_size() const {
  return state_->bytes->size;
}
const std::vector<std::pair<std::string, Value>>& Reader::metadata() const {
  return state_->metadata;
}
const std::vector<TensorInfo>& Reader::tensors() const {
  return state_->tensors;
}

const Value* Reader::find(const std::string& key) const {
  auto it = state_->key_index.find(key);
  return it == state_->key_index.end() ? nullptr : &state_->metadata[it->second].second;
}

const Value& Reader::get(const std::string& key) const {
  const Value* v = find(key);
  if (v == nullptr) fail("{}: no metadata key '{}'", state_->source, printable(key, 96));
  return *v;
}

const TensorInfo* Reader::find_tensor(const std::string& name) const {
  auto it = state_->tensor_index.find(name);
  return it == state_->tensor_index.end() ? nullptr : &state_->tensors[it->second];
}

const TensorInfo& Reader::tensor(const std::string& name) const {
  const TensorInfo* t = find_tensor(name);
  if (t == nullptr)
    fail("{}: no tensor named '{}' ({} tensors in the file)", state_->source, printable(name, 96),
         state_->tensors.size());
  return *t;
}

const uint8_t* Reader::tensor_data(const TensorInfo& info) const {
  return state_->bytes->data + state_->data_offset + info.offset;
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;  // checked for overflow when the file was read
  return n;
}

int64_t TensorInfo::num_rows() const {
  return ne.empty() || ne[0] == 0 ? 0 : numel() / ne[0];
}

Array Reader::view(const TensorInfo& info) const {
  DType dtype = DType::u8;
  Shape shape = info.shape();
  switch (info.type) {
    case quant::GgmlType::f32:
      dtype = DType::f32;
      break;
    case quant::GgmlType::f16:
      dtype = DType::f16;
      break;
    case quant::GgmlType::bf16:
      dtype = DType::bf16;
      break;
    case quant::GgmlType::f64:
      dtype = DType::f64;
      break;
    case quant::GgmlType::i8:
      dtype = DType::i8;
      break;
    case quant::GgmlType::i32:
      dtype = DType::i32;
      break;
    case quant::GgmlType::i64:
      dtype = DType::i64;
      break;
    case quant::GgmlType::i16: {
      Array out = Array::empty(DType::i32, shape);
      int32_t* dst = out.data<int32_t>();
      for (int64_t i = 0; i < info.numel(); ++i) {
        int16_t v;
        std::memcpy(&v, tensor_data(info) + 2 * i, 2);
        dst[i] = v;
      }
      return out;
    }
    default:  // block types: the raw bytes, one row of blocks per row
      if (shape.empty()) shape.push_back(1);
      shape.back() = quant::row_bytes(info.type, info.row_length(), info.name);
      break;
  }
  auto* ptr = const_cast<uint8_t*>(tensor_data(info));
  const size_t align = dtype_size(dtype);
  if (reinterpret_cast<uintptr_t>(ptr) % align == 0) {
    return Array::from_external(ptr, dtype, shape, std::shared_ptr<const void>(state_->bytes, state_->bytes.get()));
  }
  Array out = Array::empty(dtype, shape);
  std::memcpy(out.raw_data(), ptr, static_cast<size_t>(info.nbytes));
  return out;
}

Array Reader::dequantize(const TensorInfo& info) const {
  const quant::TypeTraits& traits = quant::type_traits(info.type);
  if (!traits.can_dequantize) {
    fail("{}: tensor '{}' has type {}, which Tessera cannot decode", state_->source, printable(info.name, 96),
         traits.name);
  }
  Array out = Array::empty(DType::f32, info.shape());
  const int64_t n = info.row_length();
  const int64_t rb = quant::row_bytes(info.type, n, info.name);
  float* dst = out.data<float>();
  const uint8_t* src = tensor_data(info);
  for (int64_t r = 0; r < info.num_rows(); ++r) quant::dequantize_row(info.type, src + r * rb, dst + r * n, n);
  return out;
}

}  // namespace tessera::io::gguf
