#include "tessera/io/gguf/gguf_writer.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/core/printable.h"
#include "tessera/io/atomic_file.h"

namespace tessera::io::gguf {

namespace {

struct StringSink {
  std::string out;
  void write(const void* data, size_t n) { out.append(static_cast<const char*>(data), n); }
};

struct FileSink {
  AtomicFile& file;
  void write(const void* data, size_t n) { file.write(data, n); }
};

template <class Sink, class T>
void put(Sink& sink, T v) {
  sink.write(&v, sizeof(T));
}

template <class Sink>
void put_string(Sink& sink, const std::string& s) {
  put<Sink, uint64_t>(sink, s.size());
  sink.write(s.data(), s.size());
}

// One scalar of GGUF type `type` from its widened C++ value.
template <class Sink>
void put_unsigned(Sink& sink, ValueType type, uint64_t v) {
  switch (type) {
    case ValueType::u8:
      put<Sink, uint8_t>(sink, static_cast<uint8_t>(v));
      return;
    case ValueType::u16:
      put<Sink, uint16_t>(sink, static_cast<uint16_t>(v));
      return;
    case ValueType::u32:
      put<Sink, uint32_t>(sink, static_cast<uint32_t>(v));
      return;
    default:
      put<Sink, uint64_t>(sink, v);
      return;
  }
}

template <class Sink>
void put_signed(Sink& sink, ValueType type, int64_t v) {
  switch (type) {
    case ValueType::i8:
      put<Sink, int8_t>(sink, static_cast<int8_t>(v));
      return;
    case ValueType::i16:
      put<Sink, int16_t>(sink, static_cast<int16_t>(v));
      return;
    case ValueType::i32:
      put<Sink, int32_t>(sink, static_cast<int32_t>(v));
      return;
    default:
      put<Sink, int64_t>(sink, v);
      return;
  }
}

// The value's payload (its type tag is written by the caller).
template <class Sink>
void put_payload(Sink& sink, const Value& v) {
  const ValueType scalar_type = v.is_array() ? v.elem_type() : v.type();
  if (v.is_array()) {
    put<Sink, uint32_t>(sink, static_cast<uint32_t>(v.elem_type()));
    put<Sink, uint64_t>(sink, v.array_size());
  }
  std::visit(
      [&](const auto& p) {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, uint64_t>) {
          put_unsigned(sink, scalar_type, p);
        } else if constexpr (std::is_same_v<P, int64_t>) {
          put_signed(sink, scalar_type, p);
        } else if constexpr (std::is_same_v<P, float> || std::is_same_v<P, double>) {
          put<Sink, P>(sink, p);
        } else if constexpr (std::is_same_v<P, bool>) {
          put<Sink, uint8_t>(sink, p ? 1 : 0);
        } else if constexpr (std::is_same_v<P, std::string>) {
          put_string(sink, p);
        } else if constexpr (std::is_same_v<P, std::vector<uint64_t>>) {
          for (uint64_t x : p) put_unsigned(sink, scalar_type, x);
        } else if constexpr (std::is_same_v<P, std::vector<int64_t>>) {
          for (int64_t x : p) put_signed(sink, scalar_type, x);
        } else if constexpr (std::is_same_v<P, std::vector<float>> || std::is_same_v<P, std::vector<double>>) {
          sink.write(p.data(), p.size() * sizeof(typename P::value_type));
        } else if constexpr (std::is_same_v<P, std::vector<bool>>) {
          for (bool x : p) put<Sink, uint8_t>(sink, x ? 1 : 0);
        } else if constexpr (std::is_same_v<P, std::vector<std::string>>) {
          for (const std::string& s : p) put_string(sink, s);
        } else {
          for (const Value& x : p) put_payload(sink, x);
        }
      },
      v.payload());
}

uint64_t padding(uint64_t pos, uint64_t alignment) {
  return (alignment - pos % alignment) % alignment;
}

template <class Sink>
void put_zeros(Sink& sink, uint64_t n) {
  static const char kZeros[64] = {};
  while (n > 0) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, sizeof(kZeros)));
    sink.write(kZeros, chunk);
    n -= chunk;
  }
}

}  // namespace

quant::GgmlType gguf_type_of(DType dt, const std::string& name) {
  switch (dt) {
    case DType::f32:
      return quant::GgmlType::f32;
    case DType::f16:
      return quant::GgmlType::f16;
    case DType::bf16:
      return quant::GgmlType::bf16;
    case DType::f64:
      return quant::GgmlType::f64;
    case DType::i8:
      return quant::GgmlType::i8;
    case DType::i32:
      return quant::GgmlType::i32;
    case DType::i64:
      return quant::GgmlType::i64;
    default:
      fail("gguf: tensor '{}' has dtype {}, which GGUF cannot store", printable(name, 96), dtype_name(dt));
  }
}

Writer::Writer(uint64_t alignment) : alignment_(alignment) {
  TESSERA_CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0 && alignment <= kMaxAlignment,
                "gguf writer: alignment {} is not a power of two of at most {}", alignment, kMaxAlignment);
}

void Writer::set(const std::string& key, Value value) {
  TESSERA_CHECK(key != "general.alignment", "gguf writer: general.alignment is set through the Writer's alignment");
  if (auto it = key_index_.find(key); it != key_index_.end()) {
    metadata_[it->second].second = std::move(value);
    return;
  }
  key_index_.emplace(key, metadata_.size());
  metadata_.emplace_back(key, std::move(value));
}

void Writer::append(const std::string& key, Value value) {
  remove(key);
  set(key, std::move(value));
}

void Writer::remove(const std::string& key) {
  auto it = key_index_.find(key);
  if (it == key_index_.end()) return;
  const size_t at = it->second;
  key_index_.erase(it);
  metadata_.erase(metadata_.begin() + static_cast<std::ptrdiff_t>(at));
  for (size_t i = at; i < metadata_.size(); ++i) key_index_[metadata_[i].first] = i;
}

const Value* Writer::find(const std::string& key) const {
  auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &metadata_[it->second].second;
}

void Writer::copy_metadata(const Reader& reader) {
  for (const auto& [key, value] : reader.metadata()) {
    if (key != "general.alignment") set(key, value);
  }
}

void Writer::add_tensor(const std::string& name, quant::GgmlType type, std::vector<int64_t> ne,
                        std::span<const uint8_t> data, std::shared_ptr<const void> owner) {
  const std::string shown = printable(name, 96);
  TESSERA_CHECK(!name.empty() && name.size() <= kMaxTensorName,
                "gguf writer: tensor name '{}' must have 1 to {} bytes (llama.cpp's limit)", shown, kMaxTensorName);
  TESSERA_CHECK(ne.size() <= static_cast<size_t>(kMaxDims), "gguf writer: tensor '{}' has {} dimensions; at most {}",
                shown, ne.size(), kMaxDims);
  TESSERA_CHECK(!tensor_names_.contains(name), "gguf writer: duplicate tensor name '{}'", shown);
  int64_t rows = 1;
  for (size_t d = 0; d < ne.size(); ++d) {
    TESSERA_CHECK(ne[d] >= 0, "gguf writer: tensor '{}' has negative dimension {}", shown, ne[d]);
    if (d > 0) TESSERA_CHECK(!__builtin_mul_overflow(rows, ne[d], &rows), "gguf writer: tensor '{}' is too large", shown);
  }
  int64_t expected = 0;
  TESSERA_CHECK(!__builtin_mul_overflow(quant::row_bytes(type, ne.empty() ? 1 : ne[0], shown), rows, &expected),
                "gguf writer: tensor '{}' is too large", shown);
  TESSERA_CHECK(static_cast<int64_t>(data.size()) == expected,
                "gguf writer: tensor '{}' ({} with ne {}) needs {} bytes, got {}", shown, quant::type_name(type),
                fmt::join(ne, ", "), expected, data.size());
  tensor_names_.insert(name);
  tensors_.push_back({name, type, std::move(ne), data, std::move(owner)});
}

void Writer::add_tensor(const std::string& name, quant::GgmlType type, std::vector<int64_t> ne,
                        std::vector<uint8_t> data) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(data));
  add_tensor(name, type, std::move(ne), std::span<const uint8_t>(*owned), owned);
}

void Writer::add_array(const std::string& name, const Array& array) {
  const quant::GgmlType type = gguf_type_of(array.dtype(), name);
  const Array c = array.contiguous();
  std::vector<int64_t> ne(c.shape().rbegin(), c.shape().rend());
  const auto* p = static_cast<const uint8_t*>(c.raw_data());
  auto keep = std::make_shared<Array>(c);
  add_tensor(name, type, std::move(ne), std::span<const uint8_t>(p, c.nbytes()), keep);
}

template <class Sink>
void Writer::emit(Sink& sink) const {
  const bool custom_alignment = alignment_ != kDefaultAlignment;
  put<Sink, uint32_t>(sink, kMagic);
  put<Sink, uint32_t>(sink, 3);
  put<Sink, uint64_t>(sink, tensors_.size());
  put<Sink, uint64_t>(sink, metadata_.size() + (custom_alignment ? 1 : 0));
  uint64_t pos = 24;
  StringSink header;
  for (const auto& [key, value] : metadata_) {
    put_string(header, key);
    put<StringSink, uint32_t>(header, static_cast<uint32_t>(value.type()));
    put_payload(header, value);
  }
  if (custom_alignment) {
    put_string(header, std::string("general.alignment"));
    put<StringSink, uint32_t>(header, static_cast<uint32_t>(ValueType::u32));
    put<StringSink, uint32_t>(header, static_cast<uint32_t>(alignment_));
  }
  uint64_t offset = 0;
  for (const Pending& t : tensors_) {
    put_string(header, t.name);
    put<StringSink, uint32_t>(header, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) put<StringSink, uint64_t>(header, static_cast<uint64_t>(d));
    put<StringSink, uint32_t>(header, static_cast<uint32_t>(t.type));
    put<StringSink, uint64_t>(header, offset);
    offset += t.data.size() + padding(t.data.size(), alignment_);
  }
  sink.write(header.out.data(), header.out.size());
  pos += header.out.size();
  put_zeros(sink, padding(pos, alignment_));
  for (const Pending& t : tensors_) {
    sink.write(t.data.data(), t.data.size());
    put_zeros(sink, padding(t.data.size(), alignment_));
  }
}

void Writer::write(const std::string& path) const {
  write_file_atomic(path, [this](AtomicFile& file) {
    FileSink sink{file};
    emit(sink);
  });
}

std::string Writer::serialize() const {
  StringSink sink;
  emit(sink);
  return std::move(sink.out);
}

}  // namespace tessera::io::gguf
