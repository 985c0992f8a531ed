#include "tessera/lower/loop_ir.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/core/error.h"

namespace tessera::lower {

ScalarType scalar_type_of(DType dt) {
  switch (dt) {
    case DType::f32:
      return ScalarType::f32;
    case DType::f64:
      return ScalarType::f64;
    case DType::f16:
      return ScalarType::f16;
    case DType::bf16:
      return ScalarType::bf16;
    case DType::i8:
      return ScalarType::i8;
    case DType::u8:
      return ScalarType::u8;
    case DType::i32:
      return ScalarType::i32;
    case DType::i64:
      return ScalarType::i64;
    case DType::boolean:
      return ScalarType::boolean;
    default:
      fail("loop IR: dtype {} is not supported by generated kernels", dtype_name(dt));
  }
}

const char* scalar_type_name(ScalarType t) {
  static const char* names[] = {"f32", "f64", "i8", "u8", "i32", "u32", "i64", "u64", "bool", "f16", "bf16"};
  return names[static_cast<int>(t)];
}

bool is_float(ScalarType t) {
  return t == ScalarType::f32 || t == ScalarType::f64;
}
bool is_half(ScalarType t) {
  return t == ScalarType::f16 || t == ScalarType::bf16;
}
bool is_signed_int(ScalarType t) {
  return t == ScalarType::i8 || t == ScalarType::i32 || t == ScalarType::i64;
}
bool is_unsigned_int(ScalarType t) {
  return t == ScalarType::u8 || t == ScalarType::u32 || t == ScalarType::u64;
}

int scalar_bits(ScalarType t) {
  switch (t) {
    case ScalarType::i8:
    case ScalarType::u8:
    case ScalarType::boolean:
      return 8;
    case ScalarType::f16:
    case ScalarType::bf16:
      return 16;
    case ScalarType::f32:
    case ScalarType::i32:
    case ScalarType::u32:
      return 32;
    default:
      return 64;
  }
}

ScalarType unsigned_of(ScalarType t) {
  return scalar_bits(t) == 64 ? ScalarType::u64 : ScalarType::u32;
}

const char* math_fn_name(MathFn fn) {
  static const char* names[] = {"exp",  "expm1", "log",   "log1p", "sqrt",      "sin",  "cos",
                                "tanh", "erf",   "floor", "ceil",  "nearbyint", "fabs", "pow"};
  return names[static_cast<int>(fn)];
}

const char* reduce_kind_name(ReduceKind k) {
  static const char* names[] = {"sum", "prod", "max", "min"};
  return names[static_cast<int>(k)];
}

int64_t Kernel::range() const {
  int64_t n = 1;
  for (size_t d = 0; d < domain.size(); ++d) n *= (has_reduction() && reduced[d]) ? 1 : domain[d];
  return n;
}

int64_t Kernel::work_per_unit() const {
  int64_t n = 1;
  for (size_t d = 0; d < domain.size(); ++d) n *= (has_reduction() && reduced[d]) ? domain[d] : 1;
  return n;
}

namespace {

std::string affine_str(const Affine& a) {
  std::string s = fmt::format("{}", a.constant);
  for (size_t d = 0; d < a.coef.size(); ++d) {
    if (a.coef[d] != 0) s += fmt::format(" + {}*i{}", a.coef[d], d);
  }
  return s;
}

const char* op_name(Op op) {
  static const char* names[] = {"load", "lit", "convert", "cast", "neg",   "not",   "add",    "sub",
                                "mul",  "div", "eq",      "ne",   "lt",    "le",    "gt",     "ge",
                                "and",  "or",  "select",  "call", "isnan", "isinf", "reduced", "index"};
  return names[static_cast<int>(op)];
}

void print_instrs(std::string& out, const char* prefix, const std::vector<Instr>& instrs) {
  for (size_t i = 0; i < instrs.size(); ++i) {
    const Instr& in = instrs[i];
    std::string rhs;
    switch (in.op) {
      case Op::Load:
        rhs = fmt::format("load in{}[{}]", in.buffer, affine_str(in.access));
        break;
      case Op::Literal:
        rhs = is_float(in.type) || is_half(in.type) ? fmt::format("lit {}", in.fval) : fmt::format("lit {}", in.ival);
        break;
      case Op::Call:
        rhs = fmt::format("call {}", math_fn_name(in.fn));
        break;
      case Op::Reduced:
        rhs = fmt::format("reduced r{}", in.ival);
        break;
      case Op::Index:
        rhs = fmt::format("index [{}]", affine_str(in.access));
        break;
      default:
        rhs = op_name(in.op);
        break;
    }
    if (!has_access(in.op) && in.op != Op::Literal && in.op != Op::Reduced) {
      for (int a : in.args) {
        if (a >= 0) rhs += fmt::format(" {}{}", prefix, a);
      }
    }
    out += fmt::format("  {}{}: {} = {}\n", prefix, i, scalar_type_name(in.type), rhs);
  }
}

}  // namespace

std::string print_kernel(const Kernel& k) {
  std::string out = fmt::format("kernel {} domain [{}] reduced [{}]\n", k.name, fmt::join(k.domain, ", "),
                                fmt::join(k.reduced, ", "));
  for (size_t i = 0; i < k.input_types.size(); ++i) {
    out += fmt::format("  in{}: {}{}\n", i, scalar_type_name(k.input_types[i]), k.input_used[i] ? "" : " (unused)");
  }
  for (size_t i = 0; i < k.output_types.size(); ++i) {
    out += fmt::format("  out{}: {}\n", i, scalar_type_name(k.output_types[i]));
  }
  out += "body:\n";
  print_instrs(out, "v", k.body);
  for (const Store& s : k.body_stores)
    out += fmt::format("  out{}[{}] = v{}\n", s.output, affine_str(s.access), s.value);
  for (size_t w = 0; w <= k.chained.size(); ++w) {
    const std::string prefix = w == 0 ? "v" : fmt::format("c{}_", w);
    if (w > 0) {
      out += fmt::format("walk {}:\n", w);
      print_instrs(out, prefix.c_str(), k.chained[w - 1]);
    }
    for (size_t i = 0; i < k.reductions.size(); ++i) {
      const Reduction& r = k.reductions[i];
      if (static_cast<size_t>(r.walk) != w) continue;
      out += fmt::format("  r{}: {} {} of {}{}\n", i, reduce_kind_name(r.kind), scalar_type_name(r.acc_type), prefix,
                         r.value);
    }
  }
  if (!k.epilogue.empty() || !k.epilogue_stores.empty()) out += "epilogue:\n";
  print_instrs(out, "e", k.epilogue);
  for (const Store& s : k.epilogue_stores) {
    out += fmt::format("  out{}[{}] = e{}\n", s.output, affine_str(s.access), s.value);
  }
  if (!k.row.empty() || !k.row_stores.empty()) out += "row:\n";
  print_instrs(out, "w", k.row);
  for (const Store& s : k.row_stores) out += fmt::format("  out{}[{}] = w{}\n", s.output, affine_str(s.access), s.value);
  return out;
}

}  // namespace tessera::lower
