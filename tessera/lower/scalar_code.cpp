#include "tessera/lower/scalar_code.h"

#include <fmt/format.h>

#include <cstring>

#include "tessera/core/convert.h"
#include "tessera/core/error.h"

namespace tessera::lower {

namespace {

// Calls f(T{}) with T the C++ type of a scalar type.
template <class F>
decltype(auto) dispatch_scalar(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::f32:
      return f(float{});
    case ScalarType::f64:
      return f(double{});
    case ScalarType::i8:
      return f(int8_t{});
    case ScalarType::u8:
      return f(uint8_t{});
    case ScalarType::i32:
      return f(int32_t{});
    case ScalarType::u32:
      return f(uint32_t{});
    case ScalarType::i64:
      return f(int64_t{});
    case ScalarType::u64:
      return f(uint64_t{});
    case ScalarType::boolean:
      return f(bool{});
    case ScalarType::f16:
      return f(f16_t{});
    case ScalarType::bf16:
      return f(bf16_t{});
  }
  return f(float{});
}

// A literal's value as its C++ type T.
template <class T>
T literal_value(const Instr& in) {
  if constexpr (is_half_v<T>) {
    return T(static_cast<float>(in.fval));  // exact: the literal holds a value of T
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(in.fval);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return static_cast<uint64_t>(in.ival);
  } else {
    return static_cast<T>(in.ival);
  }
}

template <class T>
void set_literal(Instr& in, T v) {
  if constexpr (is_half_v<T>) {
    in.fval = static_cast<double>(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    in.fval = static_cast<double>(v);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    in.ival = static_cast<int64_t>(v);
  } else {
    in.ival = static_cast<int64_t>(v);
  }
}

uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

}  // namespace

int ScalarCode::add(Instr in) {
  std::string key = fmt::format("{}|{}|{},{},{}|{}|{}|{}|{}|{}", static_cast<int>(in.op), static_cast<int>(in.type),
                                in.args[0], in.args[1], in.args[2], static_cast<int>(in.fn), in.buffer,
                                bits_of(in.fval), in.ival, in.access.constant);
  for (int64_t c : in.access.coef) key += fmt::format(",{}", c);
  auto it = numbering_.find(key);
  if (it != numbering_.end()) return it->second;
  instrs_.push_back(std::move(in));
  const int id = static_cast<int>(instrs_.size()) - 1;
  numbering_.emplace(std::move(key), id);
  return id;
}

int ScalarCode::load(int buffer, ScalarType t, const Affine& access) {
  Instr in;
  in.op = Op::Load;
  in.type = t;
  in.buffer = buffer;
  in.access = access;
  return add(std::move(in));
}

int ScalarCode::lit(ScalarType t, double v) {
  Instr in;
  in.op = Op::Literal;
  in.type = t;
  dispatch_scalar(t, [&](auto tag) { set_literal(in, convert_element<decltype(tag)>(v)); });
  return add(std::move(in));
}

int ScalarCode::lit_int(ScalarType t, int64_t v) {
  Instr in;
  in.op = Op::Literal;
  in.type = t;
  dispatch_scalar(t, [&](auto tag) { set_literal(in, convert_element<decltype(tag)>(v)); });
  return add(std::move(in));
}

int ScalarCode::reduced(int reduction, ScalarType t) {
  Instr in;
  in.op = Op::Reduced;
  in.type = t;
  in.ival = reduction;
  return add(std::move(in));
}

int ScalarCode::index(const Affine& a) {
  Instr in;
  in.op = Op::Index;
  in.type = ScalarType::i64;
  in.access = a;
  return add(std::move(in));
}

int ScalarCode::convert(int x, ScalarType to) {
  const Instr& src = instrs_.at(static_cast<size_t>(x));
  if (src.type == to) return x;
  // f16/bf16 convert to and from everything through f32, as convert_element does; the emitter only
  // ever sees half <-> f32.
  if ((is_half(src.type) || is_half(to)) && src.type != ScalarType::f32 && to != ScalarType::f32) {
    return convert(convert(x, ScalarType::f32), to);
  }
  if (src.op == Op::Literal) {  // fold: the literal converted exactly as convert_element would
    Instr in;
    in.op = Op::Literal;
    in.type = to;
    dispatch_scalar(src.type, [&](auto from_tag) {
      const auto v = literal_value<decltype(from_tag)>(src);
      dispatch_scalar(to, [&](auto to_tag) { set_literal(in, convert_element<decltype(to_tag)>(v)); });
    });
    return add(std::move(in));
  }
  Instr in;
  in.op = Op::Convert;
  in.type = to;
  in.args[0] = x;
  return add(std::move(in));
}

int ScalarCode::cast(int x, ScalarType to) {
  if (type(x) == to) return x;
  TESSERA_CHECK(!is_half(type(x)) && !is_half(to), "loop IR: cast of {} to {}", scalar_type_name(type(x)),
                scalar_type_name(to));
  Instr in;
  in.op = Op::Cast;
  in.type = to;
  in.args[0] = x;
  return add(std::move(in));
}

int ScalarCode::unary(Op op, int x) {
  TESSERA_CHECK(!is_half(type(x)), "loop IR: {} of {} (widen to f32 first)", static_cast<int>(op),
                scalar_type_name(type(x)));
  Instr in;
  in.op = op;
  in.type = (op == Op::IsNan || op == Op::IsInf || op == Op::Not) ? ScalarType::boolean : type(x);
  in.args[0] = x;
  return add(std::move(in));
}

int ScalarCode::binary(Op op, int a, int b) {
  TESSERA_CHECK(type(a) == type(b) && !is_half(type(a)), "loop IR: {} of {} and {}", static_cast<int>(op),
                scalar_type_name(type(a)), scalar_type_name(type(b)));
  Instr in;
  in.op = op;
  const bool boolean = op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge ||
                       op == Op::And || op == Op::Or;
  in.type = boolean ? ScalarType::boolean : type(a);
  in.args = {a, b, -1};
  return add(std::move(in));
}

int ScalarCode::select(int c, int a, int b) {
  TESSERA_CHECK(type(c) == ScalarType::boolean && type(a) == type(b), "loop IR: malformed select");
  if (a == b) return a;
  Instr in;
  in.op = Op::Select;
  in.type = type(a);
  in.args = {c, a, b};
  return add(std::move(in));
}

int ScalarCode::call(MathFn fn, int x, int y) {
  TESSERA_CHECK(is_float(type(x)), "loop IR: {} of {}", math_fn_name(fn), scalar_type_name(type(x)));
  Instr in;
  in.op = Op::Call;
  in.type = type(x);
  in.fn = fn;
  in.args = {x, y, -1};
  return add(std::move(in));
}

int ScalarCode::wrapping(Op op, int a, int b) {
  const ScalarType t = type(a);
  // Signed overflow is undefined in C: compute in the unsigned type and cast back (two's complement).
  if (is_signed_int(t) || t == ScalarType::u8) {
    const ScalarType u = unsigned_of(t);
    return cast(binary(op, cast(a, u), cast(b, u)), t);
  }
  return binary(op, a, b);
}

int ScalarCode::wrapping_neg(int x) {
  const ScalarType t = type(x);
  if (is_signed_int(t)) return wrapping(Op::Sub, lit_int(t, 0), x);
  return unary(Op::Neg, x);  // floats keep -0.0; u8 wraps in the emitter's narrowing cast
}

}  // namespace tessera::lower
