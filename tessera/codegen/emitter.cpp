// Writes loop kernels as C-family modules: literals, the helpers a module needs (saturating
// conversions, math the dialect lacks, type requirements), and the kernels themselves, whose loops
// KernelWriter (kernel_writer.h) writes; kernels of equal size-generic text share one body.
#include "tessera/codegen/emitter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "tessera/codegen/kernel_writer.h"
#include "tessera/codegen/thread_mapping.h"
#include "tessera/core/error.h"

namespace tessera::codegen {

using lower::Affine;
using lower::Instr;
using lower::Kernel;
using lower::Op;
using lower::ReduceKind;
using lower::ScalarType;

std::string format_literal(ScalarType t, double fval, int64_t ival, const Dialect& d) {
  // A half literal is its (exactly representable) value converted from f32.
  if (lower::is_half(t))
    return fmt::format("{}({})", d.f32_to_half[t == ScalarType::f16 ? 0 : 1],
                       format_literal(ScalarType::f32, fval, 0, d));
  if (lower::is_float(t)) {
    const size_t w = t == ScalarType::f32 ? 0 : 1;
    if (std::isnan(fval)) return d.nan_literal[w];
    if (std::isinf(fval)) return fval > 0 ? d.inf_literal[w] : "(-" + d.inf_literal[w] + ")";
    std::string s = t == ScalarType::f32 ? fmt::format("{}", static_cast<float>(fval)) : fmt::format("{}", fval);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    s += t == ScalarType::f32 ? d.f32_suffix : d.f64_suffix;
    return fval < 0 || std::signbit(fval) ? "(" + s + ")" : s;
  }
  if (t == ScalarType::boolean) return ival ? d.true_literal : d.false_literal;
  const std::string& spelling = d.int_literal[static_cast<size_t>(t)];
  auto spell = [&](auto v) { return fmt::format(fmt::runtime(spelling), v); };
  switch (t) {
    case ScalarType::u32:
      return spell(static_cast<uint32_t>(ival));
    case ScalarType::u64:
      return spell(static_cast<uint64_t>(ival));
    case ScalarType::i64:
      if (ival == std::numeric_limits<int64_t>::min())
        return "(" + spell(-std::numeric_limits<int64_t>::max()) + " - 1)";
      break;
    case ScalarType::i32:
      if (ival == std::numeric_limits<int32_t>::min())
        return "(" + spell(-std::numeric_limits<int32_t>::max()) + " - 1)";
      break;
    default:
      break;
  }
  return ival < 0 ? "(" + spell(ival) + ")" : spell(ival);
}

namespace detail {

std::string cast_to(const std::string& type, const std::string& e, const Dialect& d, bool compound) {
  if (d.functional_casts) return fmt::format("{}({})", type, e);
  return compound ? fmt::format("({})({})", type, e) : fmt::format("({}){}", type, e);
}

std::string convert_helper_name(ScalarType from, ScalarType to) {
  return fmt::format("tsr_{}_to_{}", lower::scalar_type_name(from), lower::scalar_type_name(to));
}

bool narrow(ScalarType t) {
  return t == ScalarType::i8 || t == ScalarType::u8 || t == ScalarType::boolean;
}

}  // namespace detail

using detail::cast_to;
using detail::convert_helper_name;
using detail::Helpers;
using detail::KernelWriter;

namespace {

// convert_element's float -> integer rule: NaN -> 0, saturate at the type's limits, else truncate.
// The limits compare in the source type: its rounding of 2^k - 1 goes up to 2^k, so every value
// below the rounded limit truncates into range, as comparing in double would decide.
std::string convert_helper(ScalarType from, ScalarType to, const Dialect& d) {
  int64_t lo = 0, hi = 0;
  switch (to) {
    case ScalarType::i8:
      lo = INT8_MIN, hi = INT8_MAX;
      break;
    case ScalarType::u8:
      lo = 0, hi = UINT8_MAX;
      break;
    case ScalarType::i32:
      lo = INT32_MIN, hi = INT32_MAX;
      break;
    case ScalarType::u32:
      lo = 0, hi = UINT32_MAX;
      break;
    case ScalarType::i64:
      lo = INT64_MIN, hi = INT64_MAX;
      break;
    default:
      fail("emitter: no saturating conversion to {}", lower::scalar_type_name(to));
  }
  auto bound = [&](int64_t v) { return format_literal(from, static_cast<double>(v), 0, d); };
  return fmt::format(
      "{q}{T} {name}({F} v) {{\n"
      "  if ({isnan}(v)) return {zero};\n"
      "  if (v <= {flo}) return {lo};\n"
      "  if (v >= {fhi}) return {hi};\n"
      "  return {cast};\n"
      "}}\n",
      fmt::arg("q", d.helper_qualifier.empty() ? "" : d.helper_qualifier + " "), fmt::arg("T", d.type(to)),
      fmt::arg("name", convert_helper_name(from, to)), fmt::arg("F", d.type(from)), fmt::arg("isnan", d.isnan_fn),
      fmt::arg("zero", format_literal(to, 0, 0, d)), fmt::arg("flo", bound(lo)), fmt::arg("fhi", bound(hi)),
      fmt::arg("lo", format_literal(to, 0, lo, d)), fmt::arg("hi", format_literal(to, 0, hi, d)),
      fmt::arg("cast", cast_to(d.type(to), "v", d)));
}

// The dialect's requirements of the types a module touches, each chunk once: preprocessor lines
// (includes, GLSL extensions) first, as GLSL wants them before any declaration.
std::string requirements(const std::set<ScalarType>& types, const Dialect& d) {
  std::vector<std::string> chunks;
  for (ScalarType t : types) {
    for (const std::string& c : d.type_requirements[static_cast<size_t>(t)]) {
      if (std::find(chunks.begin(), chunks.end(), c) == chunks.end()) chunks.push_back(c);
    }
  }
  std::stable_partition(chunks.begin(), chunks.end(), [](const std::string& c) { return c.rfind('#', 0) == 0; });
  std::string out;
  for (const std::string& c : chunks) out += c;
  return out;
}

// Size variants of one kernel text up to which each gets a body with literal sizes (more share one
// body reading its sizes from P[]: the compiler's time grows with the code).
constexpr size_t kLiteralSizeVariants = 4;

}  // namespace

std::string emit_module(const std::vector<Kernel>& kernels, const std::vector<std::string>& symbols,
                        const Dialect& dialect) {
  TESSERA_CHECK(kernels.size() == symbols.size(), "emit_module: {} kernels but {} symbols", kernels.size(),
                symbols.size());
  TESSERA_CHECK(!dialect.one_kernel_per_module || kernels.size() == 1,
                "emit_module: dialect {} takes one kernel per module, not {} (use emit_modules)", dialect.name,
                kernels.size());
  // Group kernels whose size-generic text is equal: a group compiles one body per size variant, or one
  // for all when the variants are many (the compiler's time grows with the code, and the layers of a
  // network repeat their kernels).
  Helpers helpers;
  std::vector<std::string> generic(kernels.size());
  std::vector<std::vector<int64_t>> params(kernels.size());
  std::map<std::string, std::vector<size_t>> groups;
  std::vector<std::string> group_order;
  for (size_t i = 0; i < kernels.size() && kernels.size() > 1; ++i) {
    generic[i] = KernelWriter(kernels[i], "@", dialect, helpers, &params[i]).write();
    auto [it, fresh] = groups.try_emplace(generic[i]);
    if (fresh) group_order.push_back(generic[i]);
    it->second.push_back(i);
  }
  if (kernels.size() == 1) {  // nothing to share
    group_order.push_back("");
    groups[""] = {0};
  }
  std::string body;
  for (size_t g = 0; g < group_order.size(); ++g) {
    const std::vector<size_t>& members = groups[group_order[g]];
    if (members.size() == 1) {
      const size_t i = members[0];
      body += "\n// " + kernels[i].name + "\n";
      body += KernelWriter(kernels[i], symbols[i], dialect, helpers).write();
      continue;
    }
    // Kernels of equal sizes (a layer's kernel repeated across the layers) share a body whose sizes are
    // literals: no P[] to read, and divisions by constants. A group of a few size variants gets one such
    // body per variant; only a group of many variants shares one body that reads its sizes from P[].
    std::vector<std::vector<size_t>> variants;
    for (size_t i : members) {
      auto same = std::find_if(variants.begin(), variants.end(),
                               [&](const std::vector<size_t>& v) { return params[v[0]] == params[i]; });
      if (same == variants.end()) {
        variants.push_back({i});
      } else {
        same->push_back(i);
      }
    }
    if (variants.size() <= kLiteralSizeVariants) {
      for (size_t v = 0; v < variants.size(); ++v) {
        const std::vector<size_t>& same = variants[v];
        if (same.size() == 1) {
          body += "\n// " + kernels[same[0]].name + "\n";
          body += KernelWriter(kernels[same[0]], symbols[same[0]], dialect, helpers).write();
          continue;
        }
        const std::string shared = fmt::format("tsr_shared_{}_{}", g, v);
        std::vector<int64_t> sizes;
        std::string text = KernelWriter(kernels[same[0]], "@", dialect, helpers, &sizes, /*literal_params=*/true).write();
        text.replace(text.find(" @("), 3, " " + shared + "(");
        body += fmt::format("\n// shared by {} kernels\n", same.size()) + text;
        for (size_t i : same) {
          body += fmt::format("\n// {}\n{} {{\n  {}(in_, out_, begin, end, 0);\n}}\n", kernels[i].name,
                              dialect.kernel_signature(dialect, symbols[i]), shared);
        }
      }
      continue;
    }
    const std::string shared = fmt::format("tsr_shared_{}", g);
    std::string text = group_order[g];
    text.replace(text.find(" @("), 3, " " + shared + "(");
    body += fmt::format("\n// shared by {} kernels\n", members.size()) + text;
    for (size_t i : members) {
      body += fmt::format("\n// {}\n{} {{\n", kernels[i].name, dialect.kernel_signature(dialect, symbols[i]));
      body += fmt::format("  static const {} P[] = {{{}}};\n", dialect.index_type, fmt::join(params[i], ", "));
      body += fmt::format("  {}(in_, out_, begin, end, P);\n}}\n", shared);
    }
  }
  std::string out = dialect.prelude + requirements(helpers.types, dialect);
  if (helpers.stream) out += dialect.stream_helpers;
  if (helpers.vector) out += dialect.vector_helpers;
  for (const auto& [fn, w] : helpers.math) {
    out += dialect.math_helpers[static_cast<size_t>(fn)][static_cast<size_t>(w)];
  }
  for (const auto& [from, to] : helpers.conversions) out += "\n" + convert_helper(from, to, dialect);
  return out + body;
}

std::vector<std::string> emit_modules(const std::vector<Kernel>& kernels, const std::vector<std::string>& symbols,
                                      const Dialect& dialect) {
  if (!dialect.one_kernel_per_module) return {emit_module(kernels, symbols, dialect)};
  TESSERA_CHECK(kernels.size() == symbols.size(), "emit_modules: {} kernels but {} symbols", kernels.size(),
                symbols.size());
  std::vector<std::string> modules;
  for (size_t i = 0; i < kernels.size(); ++i) modules.push_back(emit_module({kernels[i]}, {symbols[i]}, dialect));
  return modules;
}

std::string emit_kernel(const Kernel& kernel, const std::string& symbol, const Dialect& dialect) {
  return emit_module({kernel}, {symbol}, dialect);
}

}  // namespace tessera::codegen
