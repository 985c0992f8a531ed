#include "tessera/io/onnx/tensor_proto.h"

#include <cstring>
#include <optional>

#include <fmt/ranges.h>

#include "tessera/core/error.h"
#include "tessera/core/atomic_file.h"
#include "tessera/core/printable.h"
#include "tessera/io/onnx/external_data.h"
#include "tessera/io/onnx/onnx_dtype.h"

namespace tessera::io::onnx {

namespace {

// Copies `count` values of a repeated field into `out` as T (the field's declared encoding per
// onnx.proto: int32_data carries 8/16-bit integers, bools and the bits of f16/bf16).
template <class T, class Field>
void copy_field(const Field& field, void* out) {
  T* dst = static_cast<T*>(out);
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<T>(field.Get(i));
}

template <class Field>
void copy_16bit_patterns(const Field& field, void* out) {
  uint16_t* dst = static_cast<uint16_t*>(out);
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<uint16_t>(field.Get(i) & 0xffff);
}

// The typed field that holds this dtype's values, its length, and a copy into `out`.
int64_t typed_field_size(const pb::TensorProto& t, DType dt) {
  switch (dt) {
    case DType::f32: return t.float_data_size();
    case DType::f64: return t.double_data_size();
    case DType::i64: return t.int64_data_size();
    default: return t.int32_data_size();
  }
}

void copy_typed_field(const pb::TensorProto& t, DType dt, void* out) {
  switch (dt) {
    case DType::f32: copy_field<float>(t.float_data(), out); break;
    case DType::f64: copy_field<double>(t.double_data(), out); break;
    case DType::i64: copy_field<int64_t>(t.int64_data(), out); break;
    case DType::i32: copy_field<int32_t>(t.int32_data(), out); break;
    case DType::i8: copy_field<int8_t>(t.int32_data(), out); break;
    case DType::u8: copy_field<uint8_t>(t.int32_data(), out); break;
    case DType::boolean: {
      uint8_t* dst = static_cast<uint8_t*>(out);
      for (int i = 0; i < t.int32_data_size(); ++i) dst[i] = t.int32_data(i) != 0 ? 1 : 0;
      break;
    }
    case DType::f16:
    case DType::bf16: copy_16bit_patterns(t.int32_data(), out); break;
  }
}

// "f32[2, 3]", cut after eight dimensions so that a hostile rank cannot grow a message.
std::string type_text(DType dt, const Shape& shape) {
  if (shape.size() <= 8) return fmt::format("{}[{}]", dtype_name(dt), fmt::join(shape, ", "));
  return fmt::format("{}[{}, ... ({} dimensions)]", dtype_name(dt), fmt::join(shape.begin(), shape.begin() + 8, ", "),
                     shape.size());
}

const char* typed_field_name(DType dt) {
  switch (dt) {
    case DType::f32: return "float_data";
    case DType::f64: return "double_data";
    case DType::i64: return "int64_data";
    default: return "int32_data";
  }
}

}  // namespace

Shape tensor_proto_shape(const pb::TensorProto& tensor, const std::string& what) {
  Shape shape;
  int64_t numel = 1;
  for (int64_t d : tensor.dims()) {
    TESSERA_CHECK(d >= 0, "{}: dimension {} is negative", what, d);
    TESSERA_CHECK(d == 0 || numel <= INT64_MAX / 8 / d, "{}: dimension {} of {} overflows the element count",
                  what, shape.size(), tensor.dims_size());
    numel *= d;
    shape.push_back(d);
  }
  return shape;
}

void check_stored_size(const pb::TensorProto& tensor, const std::string& what) {
  TESSERA_CHECK(tensor.has_data_type() && tensor.data_type() != pb::TensorProto::UNDEFINED,
                "{}: tensor has no data_type", what);
  TESSERA_CHECK(!tensor.has_segment(), "{}: segmented tensors are not supported", what);
  const Shape shape = tensor_proto_shape(tensor, what);
  const std::optional<DType> dt = dtype_of_onnx(tensor.data_type());
  if (!dt || tensor.data_location() == pb::TensorProto::EXTERNAL) return;
  const int64_t numel = shape_numel(shape);
  if (tensor.has_raw_data()) {
    const uint64_t expected = static_cast<uint64_t>(numel) * dtype_size(*dt);
    TESSERA_CHECK(tensor.raw_data().size() == expected, "{}: raw_data is {} bytes, {} needs {}", what,
                  tensor.raw_data().size(), type_text(*dt, shape), expected);
  } else {
    const int64_t count = typed_field_size(tensor, *dt);
    TESSERA_CHECK(count == numel, "{}: {} holds {} values, {} needs {}", what, typed_field_name(*dt), count,
                  type_text(*dt, shape), numel);
  }
}

Array array_from_tensor_proto(const pb::TensorProto& tensor, const std::string& what, const std::string& model_dir) {
  // Sizes are compared before anything is allocated, so a shape that claims terabytes costs nothing.
  check_stored_size(tensor, what);
  const DType dt = require_dtype(tensor.data_type(), what);
  const Shape shape = tensor_proto_shape(tensor, what);
  if (tensor.data_location() == pb::TensorProto::EXTERNAL) {
    const uint64_t expected = static_cast<uint64_t>(shape_numel(shape)) * dtype_size(dt);
    const std::string bytes = read_external_data(tensor, what, model_dir, expected);
    Array out = Array::empty(dt, shape);
    if (expected > 0) std::memcpy(out.raw_data(), bytes.data(), expected);
    return out;
  }
  Array out = Array::empty(dt, shape);
  if (tensor.has_raw_data()) {
    if (out.nbytes() > 0) std::memcpy(out.raw_data(), tensor.raw_data().data(), out.nbytes());
  } else {
    copy_typed_field(tensor, dt, out.raw_data());
  }
  return out;
}

Array parse_onnx_tensor(const uint8_t* data, size_t size, const std::string& what, bool uint16_as_bfloat16) {
  TESSERA_CHECK(size <= static_cast<size_t>(INT32_MAX), "{}: {} bytes is over protobuf's 2 GiB limit", what, size);
  pb::TensorProto tensor;
  TESSERA_CHECK(tensor.ParseFromArray(data, static_cast<int>(size)), "{}: not a valid ONNX TensorProto ({} bytes)",
                what, size);
  if (uint16_as_bfloat16 && tensor.data_type() == pb::TensorProto::UINT16) tensor.set_data_type(pb::TensorProto::BFLOAT16);
  const std::string label = tensor.name().empty() ? what : fmt::format("{}: tensor {}", what, printable_quoted(tensor.name()));
  return array_from_tensor_proto(tensor, label, "");
}

Array load_onnx_tensor(const std::string& path, bool uint16_as_bfloat16) {
  const MappedFile file(path);
  return parse_onnx_tensor(file.data(), file.size(), path, uint16_as_bfloat16);
}

}  // namespace tessera::io::onnx
