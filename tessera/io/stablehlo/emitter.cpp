#include "tessera/io/stablehlo/emitter.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <numeric>

namespace tessera::io::stablehlo {

namespace {

[[noreturn]] void emit_fail(const std::string& what, const std::string& detail) {
  fail("stablehlo export: {}: {}", what, detail);
}

std::string types_of(const std::vector<Val>& vs) {
  std::vector<std::string> t;
  for (const Val& v : vs) t.push_back(v.type());
  return fmt::format("{}", fmt::join(t, ", "));
}

std::string names_of(const std::vector<Val>& vs) {
  std::vector<std::string> n;
  for (const Val& v : vs) n.push_back(v.name);
  return fmt::format("{}", fmt::join(n, ", "));
}

std::string result_types(const std::vector<std::pair<std::string, Shape>>& rs) {
  std::vector<std::string> t;
  for (const auto& [elem, shape] : rs) t.push_back(tensor_type(elem, shape));
  return rs.size() == 1 ? t[0] : fmt::format("({})", fmt::join(t, ", "));
}

std::vector<int64_t> iota_vec(int64_t n, int64_t from = 0) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

}  // namespace

std::string cmp_name(Cmp c) {
  switch (c) {
    case Cmp::EQ:
      return "EQ";
    case Cmp::NE:
      return "NE";
    case Cmp::LT:
      return "LT";
    case Cmp::LE:
      return "LE";
    case Cmp::GT:
      return "GT";
    case Cmp::GE:
      return "GE";
  }
  return "EQ";
}

std::string compare_type(const std::string& elem) {
  if (is_float_element(elem)) return "FLOAT";
  return is_unsigned_element(elem) ? "UNSIGNED" : "SIGNED";
}

Val Emitter::op(const std::string& body, const std::string& elem, const Shape& shape) {
  Val v{fresh(), elem, shape};
  line(v.name + " = " + body);
  return v;
}

std::vector<Val> Emitter::op_multi(const std::string& body, const std::vector<std::pair<std::string, Shape>>& results) {
  const std::string base = fresh();
  line(fmt::format("{}:{} = {}", base, results.size(), body));
  std::vector<Val> out;
  for (size_t i = 0; i < results.size(); ++i)
    out.push_back({fmt::format("{}#{}", base, i), results[i].first, results[i].second});
  return out;
}

std::vector<Val> Emitter::region_op(const std::string& head, const std::vector<std::string>& block_elems,
                                    const RegionBody& body, const std::string& signature,
                                    const std::vector<std::pair<std::string, Shape>>& results) {
  const std::string base = fresh();
  const std::string lhs = results.size() == 1 ? base : fmt::format("{}:{}", base, results.size());
  line(fmt::format("{} = {} ({{", lhs, head));
  std::vector<Val> args;
  std::vector<std::string> decl;
  for (const std::string& elem : block_elems) {
    args.push_back({fresh(), elem, {}});
    decl.push_back(args.back().name + ": " + args.back().type());
  }
  line(fmt::format("^bb0({}):", fmt::join(decl, ", ")));
  indent_ += 2;
  const std::vector<Val> rets = body(*this, args);
  line(fmt::format("stablehlo.return {} : {}", names_of(rets), types_of(rets)));
  indent_ -= 2;
  line("}) : " + signature);
  std::vector<Val> out;
  for (size_t i = 0; i < results.size(); ++i) {
    out.push_back({results.size() == 1 ? base : fmt::format("{}#{}", base, i), results[i].first, results[i].second});
  }
  return out;
}

// --- constants -------------------------------------------------------------------------------------

Val Emitter::constant(const Array& value, int64_t max_list_elements) {
  const std::string elem = element_type(value.dtype());
  return op(fmt::format("stablehlo.constant {} : {}", dense_literal(value, max_list_elements),
                        tensor_type(elem, value.shape())),
            elem, value.shape());
}

namespace {
// The Tessera dtype spelled `elem`, when there is one.
bool dtype_of_element(const std::string& elem, DType* out) {
  for (DType dt : kAllDTypes) {
    if (element_type(dt) == elem) {
      *out = dt;
      return true;
    }
  }
  return false;
}
}  // namespace

Val Emitter::splat(double value, const std::string& elem, const Shape& shape) {
  std::string lit;
  DType dt = DType::f32;
  if (dtype_of_element(elem, &dt)) {
    // Through Array::full so that the value converts exactly as Tessera converts it (f16 via f32,
    // float -> integer truncating and saturating, ...).
    const Array a = Array::full(dt, {}, value);
    lit = is_floating(dt) ? float_literal(a.item(), elem) : int_literal(a.to_i64()[0], elem);
  } else {
    TESSERA_CHECK(value >= 0 && value == std::floor(value) && value < 18446744073709551616.0,
                  "stablehlo export: {} splat of {}", elem, value);
    lit = uint_literal(static_cast<uint64_t>(value));
  }
  const std::string type = tensor_type(elem, shape);
  return op(fmt::format("stablehlo.constant dense<{}> : {}", shape_numel(shape) == 0 ? std::string() : lit, type), elem,
            shape);
}

Val Emitter::splat_bits(uint64_t value, const std::string& elem, const Shape& shape) {
  return op(fmt::format("stablehlo.constant dense<{}> : {}", uint_literal(value), tensor_type(elem, shape)), elem,
            shape);
}

Val Emitter::iota(const std::string& elem, const Shape& shape, int64_t dim) {
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size())) emit_fail("iota", "dimension out of range");
  return op(fmt::format("stablehlo.iota dim = {} : {}", dim, tensor_type(elem, shape)), elem, shape);
}

// --- elementwise -----------------------------------------------------------------------------------

Val Emitter::unary(const std::string& name, const Val& x) {
  return op(fmt::format("{} {} : {}", name, x.name, x.type()), x.elem, x.shape);
}

Val Emitter::binary(const std::string& name, const Val& a, const Val& b) {
  if (a.type() != b.type()) emit_fail(name, fmt::format("operand types differ: {} and {}", a.type(), b.type()));
  return op(fmt::format("{} {}, {} : {}", name, a.name, b.name, a.type()), a.elem, a.shape);
}

Val Emitter::compare(Cmp dir, const Val& a, const Val& b) {
  if (a.type() != b.type()) emit_fail("compare", fmt::format("operand types differ: {} and {}", a.type(), b.type()));
  return op(fmt::format("stablehlo.compare  {}, {}, {},  {} : ({}, {}) -> {}", cmp_name(dir), a.name, b.name,
                        compare_type(a.elem), a.type(), b.type(), tensor_type("i1", a.shape)),
            "i1", a.shape);
}

Val Emitter::select(const Val& cond, const Val& on_true, const Val& on_false) {
  if (on_true.type() != on_false.type() || cond.elem != "i1" || cond.shape != on_true.shape) {
    emit_fail("select", fmt::format("operands {}, {}, {}", cond.type(), on_true.type(), on_false.type()));
  }
  return op(fmt::format("stablehlo.select {}, {}, {} : {}, {}", cond.name, on_true.name, on_false.name, cond.type(),
                        on_true.type()),
            on_true.elem, on_true.shape);
}

Val Emitter::raw_convert(const Val& x, const std::string& elem) {
  if (x.elem == elem) return x;
  return op(fmt::format("stablehlo.convert {} : ({}) -> {}", x.name, x.type(), tensor_type(elem, x.shape)), elem,
            x.shape);
}

Val Emitter::bitcast(const Val& x, const std::string& elem) {
  if (element_bits(x.elem) != element_bits(elem)) emit_fail("bitcast_convert", x.elem + " to " + elem);
  return op(fmt::format("stablehlo.bitcast_convert {} : ({}) -> {}", x.name, x.type(), tensor_type(elem, x.shape)),
            elem, x.shape);
}

namespace {

// The integer range of an element type, as doubles (exact for every bound but i64's maximum).
std::pair<double, double> int_range(const std::string& elem) {
  if (elem == "i8") return {-128.0, 127.0};
  if (elem == "i32") return {-2147483648.0, 2147483647.0};
  if (elem == "i64") return {-9223372036854775808.0, 9223372036854775807.0};
  if (elem == "ui8") return {0.0, 255.0};
  emit_fail("convert", "no integer range for " + elem);
}

// The smallest float (f32 or f64) >= v, and the largest <= v.
double ceil_to(double v, bool f32) {
  if (!f32) return v;  // the only inexact bound, 2^63 - 1, reads as 2^63 which is >= it
  float f = static_cast<float>(v);
  if (static_cast<double>(f) < v) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}
double floor_to(double v, bool f32) {
  if (!f32) return v;
  float f = static_cast<float>(v);
  if (static_cast<double>(f) > v) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

}  // namespace

Val Emitter::convert(const Val& x, const std::string& elem) {
  if (x.elem == elem) return x;
  if (elem == "i1") return compare(Cmp::NE, x, splat_like(x, 0.0));
  const bool to_half = elem == "f16" || elem == "bf16";
  if (to_half && (x.elem == "f64" || x.elem == "i32" || x.elem == "i64")) {
    return raw_convert(raw_convert(x, "f32"), elem);
  }
  if (x.is_float() && !is_float_element(elem)) {
    // Saturating float -> integer: values at or beyond a bound take the bound, NaN becomes 0, and
    // only in-range values reach the (truncating) convert.
    const Val xf = (x.elem == "f16" || x.elem == "bf16") ? raw_convert(x, "f32") : x;
    const bool f32 = xf.elem == "f32";
    const auto [lo, hi] = int_range(elem);
    const Val lo_f = splat(floor_to(lo, f32), xf.elem, xf.shape);
    const Val hi_f = splat(ceil_to(hi, f32), xf.elem, xf.shape);
    const Val below = compare(Cmp::LE, xf, lo_f);
    const Val above = compare(Cmp::GE, xf, hi_f);
    const Val not_below = unary("stablehlo.not", below);
    const Val not_above = unary("stablehlo.not", above);
    const Val in_range = logical_and(not_below, not_above);
    const Val inside = logical_and(in_range, compare(Cmp::EQ, xf, xf));  // and not NaN
    const Val safe = select(inside, xf, splat_like(xf, 0.0));
    const Val converted = raw_convert(safe, elem);
    Val lo_i = op(
        fmt::format("stablehlo.constant dense<{}> : {}",
                    elem == "i64" ? std::string("-9223372036854775808") : int_literal(static_cast<int64_t>(lo), elem),
                    tensor_type(elem, x.shape)),
        elem, x.shape);
    Val hi_i =
        op(fmt::format("stablehlo.constant dense<{}> : {}",
                       elem == "i64" ? std::string("9223372036854775807") : int_literal(static_cast<int64_t>(hi), elem),
                       tensor_type(elem, x.shape)),
           elem, x.shape);
    return select(above, hi_i, select(below, lo_i, converted));
  }
  return raw_convert(x, elem);
}

// --- shape ------------------------------------------------------------------------------------------

Val Emitter::broadcast_in_dim(const Val& x, const Shape& shape, const std::vector<int64_t>& dims) {
  if (static_cast<int64_t>(dims.size()) != x.rank()) emit_fail("broadcast_in_dim", "one dimension per operand axis");
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= static_cast<int64_t>(shape.size()) ||
        (x.shape[i] != 1 && x.shape[i] != shape[static_cast<size_t>(d)])) {
      emit_fail("broadcast_in_dim", fmt::format("cannot broadcast {} to {} with dims {}", x.type(),
                                                tensor_type(x.elem, shape), int_list(dims)));
    }
  }
  if (x.shape == shape) {
    bool identity = true;
    for (size_t i = 0; i < dims.size(); ++i) identity = identity && dims[i] == static_cast<int64_t>(i);
    if (identity) return x;
  }
  return op(fmt::format("stablehlo.broadcast_in_dim {}, dims = {} : ({}) -> {}", x.name, int_list(dims), x.type(),
                        tensor_type(x.elem, shape)),
            x.elem, shape);
}

Val Emitter::broadcast_to(const Val& x, const Shape& shape) {
  if (x.shape == shape) return x;
  const int64_t lead = static_cast<int64_t>(shape.size()) - x.rank();
  if (lead < 0) emit_fail("broadcast", fmt::format("cannot broadcast {} to rank {}", x.type(), shape.size()));
  return broadcast_in_dim(x, shape, iota_vec(x.rank(), lead));
}

Val Emitter::reshape(const Val& x, const Shape& shape) {
  if (x.shape == shape) return x;
  if (shape_numel(shape) != x.numel()) emit_fail("reshape", fmt::format("{} to {}", x.type(), shape_str(shape)));
  return op(fmt::format("stablehlo.reshape {} : ({}) -> {}", x.name, x.type(), tensor_type(x.elem, shape)), x.elem,
            shape);
}

Val Emitter::transpose(const Val& x, const std::vector<int64_t>& perm) {
  if (static_cast<int64_t>(perm.size()) != x.rank()) emit_fail("transpose", "permutation rank");
  bool identity = true;
  Shape shape;
  for (size_t i = 0; i < perm.size(); ++i) {
    identity = identity && perm[i] == static_cast<int64_t>(i);
    shape.push_back(x.shape.at(static_cast<size_t>(perm[i])));
  }
  if (identity) return x;
  return op(fmt::format("stablehlo.transpose {}, dims = {} : ({}) -> {}", x.name, int_list(perm), x.type(),
                        tensor_type(x.elem, shape)),
            x.elem, shape);
}

Val Emitter::slice(const Val& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                   const std::vector<int64_t>& strides_in) {
  const std::vector<int64_t> strides = strides_in.empty() ? std::vector<int64_t>(start.size(), 1) : strides_in;
  if (static_cast<int64_t>(start.size()) != x.rank() || limit.size() != start.size() ||
      strides.size() != start.size()) {
    emit_fail("slice", "one bound per axis");
  }
  Shape shape;
  std::vector<std::string> parts;
  bool whole = true;
  for (size_t i = 0; i < start.size(); ++i) {
    if (start[i] < 0 || limit[i] > x.shape[i] || start[i] > limit[i] || strides[i] < 1) {
      emit_fail("slice",
                fmt::format("bounds {}:{}:{} on an axis of size {}", start[i], limit[i], strides[i], x.shape[i]));
    }
    shape.push_back(limit[i] == start[i] ? 0 : (limit[i] - start[i] - 1) / strides[i] + 1);
    whole = whole && start[i] == 0 && limit[i] == x.shape[i] && strides[i] == 1;
    parts.push_back(strides[i] == 1 ? fmt::format("{}:{}", start[i], limit[i])
                                    : fmt::format("{}:{}:{}", start[i], limit[i], strides[i]));
  }
  if (whole) return x;
  return op(fmt::format("stablehlo.slice {} [{}] : ({}) -> {}", x.name, fmt::join(parts, ", "), x.type(),
                        tensor_type(x.elem, shape)),
            x.elem, shape);
}

Val Emitter::slice_axis(const Val& x, int64_t axis, int64_t start, int64_t limit, int64_t stride) {
  std::vector<int64_t> lo(static_cast<size_t>(x.rank()), 0), hi = x.shape, st(static_cast<size_t>(x.rank()), 1);
  lo[static_cast<size_t>(axis)] = start;
  hi[static_cast<size_t>(axis)] = limit;
  st[static_cast<size_t>(axis)] = stride;
  return slice(x, lo, hi, st);
}

Val Emitter::concatenate(const std::vector<Val>& xs, int64_t dim) {
  if (xs.empty()) emit_fail("concatenate", "no operands");
  if (xs.size() == 1) return xs[0];
  Shape shape = xs[0].shape;
  shape.at(static_cast<size_t>(dim)) = 0;
  for (const Val& x : xs) {
    if (x.elem != xs[0].elem || x.rank() != xs[0].rank()) emit_fail("concatenate", "operand types " + types_of(xs));
    shape[static_cast<size_t>(dim)] += x.shape[static_cast<size_t>(dim)];
  }
  return op(fmt::format("stablehlo.concatenate {}, dim = {} : ({}) -> {}", names_of(xs), dim, types_of(xs),
                        tensor_type(xs[0].elem, shape)),
            xs[0].elem, shape);
}

Val Emitter::pad(const Val& x, const Val& value, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                 const std::vector<int64_t>& interior) {
  if (value.elem != x.elem || value.rank() != 0) emit_fail("pad", "padding value " + value.type());
  Shape shape;
  bool none = true;
  for (size_t i = 0; i < x.shape.size(); ++i) {
    const int64_t n = x.shape[i];
    shape.push_back(low[i] + high[i] + n + (n > 0 ? (n - 1) * interior[i] : 0));
    if (shape.back() < 0 || interior[i] < 0) emit_fail("pad", "negative size");
    none = none && low[i] == 0 && high[i] == 0 && interior[i] == 0;
  }
  if (none) return x;
  return op(fmt::format("stablehlo.pad {}, {}, low = {}, high = {}, interior = {} : ({}, {}) -> {}", x.name, value.name,
                        int_list(low), int_list(high), int_list(interior), x.type(), value.type(),
                        tensor_type(x.elem, shape)),
            x.elem, shape);
}

Val Emitter::reverse(const Val& x, const std::vector<int64_t>& dims) {
  if (dims.empty()) return x;
  return op(fmt::format("stablehlo.reverse {}, dims = {} : {}", x.name, int_list(dims), x.type()), x.elem, x.shape);
}

// --- reductions ---------------------------------------------------------------------------------------

namespace {
Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) out.push_back(shape[d]);
  }
  return out;
}
}  // namespace

Val Emitter::reduce(const Val& x, const Val& init, const std::vector<int64_t>& dims, const std::string& body_op) {
  if (init.elem != x.elem || init.rank() != 0) emit_fail("reduce", "init value " + init.type());
  if (dims.empty()) return x;
  const Shape shape = reduced_shape(x.shape, dims);
  return op(fmt::format("stablehlo.reduce({} init: {}) applies {} across dimensions = {} : ({}, {}) -> {}", x.name,
                        init.name, body_op, int_list(dims), x.type(), init.type(), tensor_type(x.elem, shape)),
            x.elem, shape);
}

std::vector<Val> Emitter::reduce_multi(const std::vector<Val>& xs, const std::vector<Val>& inits,
                                       const std::vector<int64_t>& dims, const RegionBody& body) {
  std::vector<Val> operands = xs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<std::string> block;
  std::vector<std::pair<std::string, Shape>> results;
  for (const Val& x : xs) results.push_back({x.elem, reduced_shape(x.shape, dims)});
  for (int side = 0; side < 2; ++side) {
    for (const Val& x : xs) block.push_back(x.elem);
  }
  return region_op(fmt::format("\"stablehlo.reduce\"({}) <{{dimensions = {}}}>", names_of(operands), array_i64(dims)),
                   block, body, fmt::format("({}) -> {}", types_of(operands), result_types(results)), results);
}

std::vector<Val> Emitter::reduce_window(const std::vector<Val>& xs, const std::vector<Val>& inits, const Window& w,
                                        const RegionBody& body) {
  const size_t rank = xs.at(0).shape.size();
  const std::vector<int64_t> ones(rank, 1);
  const std::vector<int64_t>& strides = w.strides.empty() ? ones : w.strides;
  const std::vector<int64_t>& dil = w.dilations.empty() ? ones : w.dilations;
  std::vector<std::pair<int64_t, int64_t>> pads = w.padding;
  if (pads.empty()) pads.assign(rank, {0, 0});
  if (w.dims.size() != rank || strides.size() != rank || dil.size() != rank || pads.size() != rank) {
    emit_fail("reduce_window", "window attributes need one entry per axis");
  }
  Shape out;
  bool any_pad = false;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t padded = xs[0].shape[d] + pads[d].first + pads[d].second;
    const int64_t eff = dil[d] * (w.dims[d] - 1) + 1;
    if (padded < eff) emit_fail("reduce_window", "window larger than the padded input");
    out.push_back((padded - eff) / strides[d] + 1);
    any_pad = any_pad || pads[d].first != 0 || pads[d].second != 0;
  }
  std::vector<std::string> attrs;
  if (any_pad) attrs.push_back("padding = " + padding_attr(pads));
  if (dil != ones) attrs.push_back("window_dilations = " + array_i64(dil));
  attrs.push_back("window_dimensions = " + array_i64(w.dims));
  if (strides != ones) attrs.push_back("window_strides = " + array_i64(strides));
  std::vector<Val> operands = xs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  std::vector<std::string> block;
  std::vector<std::pair<std::string, Shape>> results;
  for (const Val& x : xs) results.push_back({x.elem, out});
  for (int side = 0; side < 2; ++side) {
    for (const Val& x : xs) block.push_back(x.elem);
  }
  return region_op(fmt::format("\"stablehlo.reduce_window\"({}) <{{{}}}>", names_of(operands), fmt::join(attrs, ", ")),
                   block, body, fmt::format("({}) -> {}", types_of(operands), result_types(results)), results);
}

Val Emitter::reduce_window(const Val& x, const Val& init, const Window& w, const std::string& body_op) {
  return reduce_window({x}, {init}, w, [body_op](Emitter& e, const std::vector<Val>& a) -> std::vector<Val> {
    return {e.binary(body_op, a[0], a[1])};
  })[0];
}

// --- indexing ------------------------------------------------------------------------------------------

Val Emitter::gather_elements(const Val& x, const Val& coords) {
  const int64_t r = x.rank();
  if (coords.rank() < 1 || coords.shape.back() != r) emit_fail("gather", "index tuples of the operand's rank");
  const std::vector<int64_t> all = iota_vec(r);
  Shape out(coords.shape.begin(), coords.shape.end() - 1);
  return op(fmt::format("\"stablehlo.gather\"({}, {}) <{{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = "
                        "{}, start_index_map = {}, index_vector_dim = {}>, indices_are_sorted = false, slice_sizes = "
                        "{}}}> : ({}, {}) -> {}",
                        x.name, coords.name, int_list(all), int_list(all), coords.rank() - 1,
                        array_i64(std::vector<int64_t>(static_cast<size_t>(r), 1)), x.type(), coords.type(),
                        tensor_type(x.elem, out)),
            x.elem, out);
}

namespace {
std::vector<Val> add_body(Emitter& e, const std::vector<Val>& a) {
  return {e.add(a[0], a[1])};
}
}  // namespace

Val Emitter::scatter_add_elements(const Val& x, const Val& coords, const Val& updates) {
  const int64_t r = x.rank();
  if (coords.rank() < 1 || coords.shape.back() != r) emit_fail("scatter", "index tuples of the operand's rank");
  const std::vector<int64_t> all = iota_vec(r);
  const std::string head = fmt::format(
      "\"stablehlo.scatter\"({}, {}, {}) <{{indices_are_sorted = false, scatter_dimension_numbers = "
      "#stablehlo.scatter<inserted_window_dims = {}, scatter_dims_to_operand_dims = {}, index_vector_dim = {}>, "
      "unique_indices = false}}>",
      x.name, coords.name, updates.name, int_list(all), int_list(all), coords.rank() - 1);
  return region_op(head, {x.elem, x.elem}, add_body,
                   fmt::format("({}, {}, {}) -> {}", x.type(), coords.type(), updates.type(), x.type()),
                   {{x.elem, x.shape}})[0];
}

Val Emitter::take_along(const Val& x, const Val& index, int64_t axis) {
  const int64_t r = x.rank();
  std::vector<int64_t> offset_dims, slice_sizes = x.shape;
  for (int64_t d = 0; d < r; ++d) {
    if (d != axis) offset_dims.push_back(d);
  }
  slice_sizes[static_cast<size_t>(axis)] = 1;
  Shape out = x.shape;
  out[static_cast<size_t>(axis)] = index.numel();
  const Val idx = reshape(index, {index.numel(), 1});
  const std::string offsets = offset_dims.empty() ? std::string() : "offset_dims = " + int_list(offset_dims) + ", ";
  return op(
      fmt::format("\"stablehlo.gather\"({}, {}) <{{dimension_numbers = #stablehlo.gather<{}collapsed_slice_dims = "
                  "[{}], start_index_map = [{}], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = "
                  "{}}}> : ({}, {}) -> {}",
                  x.name, idx.name, offsets, axis, axis, array_i64(slice_sizes), x.type(), idx.type(),
                  tensor_type(x.elem, out)),
      x.elem, out);
}

Val Emitter::add_along(const Val& x, const Val& index, const Val& updates, int64_t axis) {
  const int64_t r = x.rank();
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < r; ++d) {
    if (d != axis) window_dims.push_back(d);
  }
  const Val idx = reshape(index, {index.numel(), 1});
  const std::string windows =
      window_dims.empty() ? std::string() : "update_window_dims = " + int_list(window_dims) + ", ";
  const std::string head = fmt::format(
      "\"stablehlo.scatter\"({}, {}, {}) <{{indices_are_sorted = false, scatter_dimension_numbers = "
      "#stablehlo.scatter<{}inserted_window_dims = [{}], scatter_dims_to_operand_dims = [{}], index_vector_dim = 1>, "
      "unique_indices = false}}>",
      x.name, idx.name, updates.name, windows, axis, axis);
  return region_op(head, {x.elem, x.elem}, add_body,
                   fmt::format("({}, {}, {}) -> {}", x.type(), idx.type(), updates.type(), x.type()),
                   {{x.elem, x.shape}})[0];
}

// --- products --------------------------------------------------------------------------------------------

Val Emitter::dot_general(const Val& a, const Val& b, const std::vector<int64_t>& a_batch,
                         const std::vector<int64_t>& b_batch, const std::vector<int64_t>& a_contract,
                         const std::vector<int64_t>& b_contract, bool highest) {
  if (a.elem != b.elem) emit_fail("dot_general", "operand types " + a.type() + " and " + b.type());
  Shape shape;
  for (int64_t d : a_batch) shape.push_back(a.shape.at(static_cast<size_t>(d)));
  auto free_dims = [&](const Val& v, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract) {
    for (int64_t d = 0; d < v.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contract.begin(), contract.end(), d) == contract.end()) {
        shape.push_back(v.shape[static_cast<size_t>(d)]);
      }
    }
  };
  free_dims(a, a_batch, a_contract);
  free_dims(b, b_batch, b_contract);
  for (size_t i = 0; i < a_contract.size(); ++i) {
    if (a.shape.at(static_cast<size_t>(a_contract[i])) != b.shape.at(static_cast<size_t>(b_contract[i]))) {
      emit_fail("dot_general", "contracting dimensions differ in size");
    }
  }
  std::string dims;
  if (!a_batch.empty()) dims += fmt::format(", batching_dims = {} x {}", int_list(a_batch), int_list(b_batch));
  dims += fmt::format(", contracting_dims = {} x {}", int_list(a_contract), int_list(b_contract));
  if (highest) dims += ", precision = [HIGHEST, HIGHEST]";
  return op(fmt::format("stablehlo.dot_general {}, {}{} : ({}, {}) -> {}", a.name, b.name, dims, a.type(), b.type(),
                        tensor_type(a.elem, shape)),
            a.elem, shape);
}

Val Emitter::convolution(const Val& lhs, const Val& rhs, const ConvSpec& s, const Shape& out_shape) {
  if (lhs.elem != rhs.elem) emit_fail("convolution", "operand types " + lhs.type() + " and " + rhs.type());
  std::vector<std::string> pads;
  for (const auto& [lo, hi] : s.padding) pads.push_back(fmt::format("[{}, {}]", lo, hi));
  std::string attrs =
      fmt::format("batch_group_count = {} : i64, feature_group_count = {} : i64", s.batch_groups, s.feature_groups);
  if (s.highest) attrs += ", precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]";
  return op(fmt::format("stablehlo.convolution({}, {}) dim_numbers = [{}]x[{}]->[{}], window = {{stride = {}, pad = "
                        "[{}], lhs_dilate = {}, rhs_dilate = {}}} {{{}}} : ({}, {}) -> {}",
                        lhs.name, rhs.name, s.lhs, s.rhs, s.out, int_list(s.stride), fmt::join(pads, ", "),
                        int_list(s.lhs_dilation), int_list(s.rhs_dilation), attrs, lhs.type(), rhs.type(),
                        tensor_type(lhs.elem, out_shape)),
            lhs.elem, out_shape);
}

Val Emitter::sort_by_key(const Val& keys, const Val& values, int64_t dim) {
  if (keys.shape != values.shape) emit_fail("sort", "keys and values differ in shape");
  const std::string head = fmt::format("\"stablehlo.sort\"({}, {}) <{{dimension = {} : i64, is_stable = true}}>",
                                       keys.name, values.name, dim);
  return region_op(
      head, {keys.elem, keys.elem, values.elem, values.elem},
      [](Emitter& e, const std::vector<Val>& a) -> std::vector<Val> { return {e.compare(Cmp::LT, a[0], a[1])}; },
      fmt::format("({}, {}) -> ({}, {})", keys.type(), values.type(), keys.type(), values.type()),
      {{keys.elem, keys.shape}, {values.elem, values.shape}})[1];
}

Val Emitter::erf(const Val& x) {
  return op(fmt::format("chlo.erf {} : {} -> {}", x.name, x.type(), x.type()), x.elem, x.shape);
}

}  // namespace tessera::io::stablehlo
