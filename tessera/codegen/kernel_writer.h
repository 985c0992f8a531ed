#pragma once
// The emitter's writer of one kernel (internal to tessera/codegen; emitter.cpp writes the module
// around the kernels). Three loop shapes cover every kernel:
//  - elementwise: rows of the domain with a contiguous inner loop (RowLoops), or one element per
//    thread step (GridStride);
//  - reduction whose innermost axis is reduced: one output element per range unit, accumulators in
//    registers, the inner loop a SIMD reduction;
//  - reduction whose innermost axis is kept (RowLoops): a tile of neighbouring outputs accumulated
//    together in small arrays, so the inner loop stays contiguous (a column sum reads rows).
// A row kernel's row phase (loop_ir.h) follows its output's epilogue: the thread that reduced the
// row walks it again; where lanes or a block shared the row, every one of them first takes the
// group's finished result and then walks its strided share of the row (row_phase.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "tessera/codegen/emitter.h"
#include "tessera/codegen/thread_mapping.h"
#include "tessera/core/error.h"

namespace tessera::codegen::detail {

using lower::Affine;
using lower::Instr;
using lower::Kernel;
using lower::Op;
using lower::ReduceKind;
using lower::ScalarType;

// What the module's helper section must define.
struct Helpers {
  std::set<std::pair<ScalarType, ScalarType>> conversions;  // saturating float -> integer conversions
  std::set<std::pair<int, int>> math;                       // (MathFn, 0: f32 / 1: f64) the dialect defines
  std::set<ScalarType> types;                               // for the dialect's type requirements
  bool stream = false;                                      // the dialect's streaming-store helpers
  bool vector = false;                                      // the dialect's vector type
};

// (T)x or T(x); `e` must be a primary expression unless `compound` says it needs parentheses in C.
std::string cast_to(const std::string& type, const std::string& e, const Dialect& d, bool compound = false);
std::string convert_helper_name(ScalarType from, ScalarType to);
bool narrow(ScalarType t);  // i8, u8, bool: C computes them in int

class KernelWriter {
 public:
  // With `params`, extents and outer strides are read from P[] rather than written as literals, so
  // kernels that differ only in sizes print the same text and can share one compiled body; with
  // `literal_params` too, the body's size locals are those of this kernel (every kernel sharing it
  // has the same sizes), so the compiler can fold the divisions of the index decomposition.
  KernelWriter(const Kernel& k, const std::string& symbol, const Dialect& d, Helpers& helpers,
               std::vector<int64_t>* params = nullptr, bool literal_params = false)
      : k_(k), symbol_(symbol), d_(d), helpers_(helpers), params_(params), literal_params_(literal_params),
        last_(k.domain.size() - 1), mapping_(thread_mapping(k, d)) {
    if (d.index_bits < 64) check_index_range();
    note_types();
    plan_streaming();
  }

  std::string write() {
    std::vector<BufferBinding> bindings;
    for (size_t i = 0; i < k_.input_types.size(); ++i) {
      if (k_.input_used[i]) bindings.push_back({false, i, static_cast<int>(i), buffer_type(k_.input_types[i])});
    }
    for (size_t i = 0; i < k_.output_types.size(); ++i) {
      bindings.push_back({true, i, static_cast<int>(k_.input_types.size() + i), buffer_type(k_.output_types[i])});
    }
    if (d_.bindings_at_module_scope) {
      for (const BufferBinding& b : bindings) line(d_.bind_buffer(d_, b));
    }
    if (tree_lanes()) declare_tree_slots();
    if (params_) {
      line(fmt::format("{0} void {1}(const void* const* in_, void* const* out_, {2} begin, {2} end, const {2}* P) {{",
                       d_.shared_body_qualifier, symbol_, d_.index_type));
    } else {
      line(d_.kernel_signature(d_, symbol_) + " {");
    }
    ++indent_;
    const size_t params_at = out_.size();
    if (!d_.bindings_at_module_scope) {
      for (const BufferBinding& b : bindings) line(d_.bind_buffer(d_, b));
    }
    for (size_t i = 0; i < streamed_.size(); ++i) {
      if (!streamed_[i]) continue;
      const std::string& t = buffer_type(k_.output_types[static_cast<size_t>(k_.body_stores[i].output)]);
      line(fmt::format(fmt::runtime(d_.stream_buffer_decl), fmt::arg("type", t),
                       fmt::arg("name", fmt::format("s{}", i)), fmt::arg("size", block_)) +
           ";");
    }
    variant_.clear();
    if (!k_.has_reduction()) {
      if (d_.schedule == Schedule::RowLoops) {
        elementwise_rows();
      } else if (mapping_.vector > 1) {
        elementwise_vectors();
      } else {
        elementwise_grid();
      }
    } else if (d_.schedule == Schedule::RowLoops && !k_.reduced[last_] && !k_.has_row_phase()) {
      // (A row kernel keeps its innermost axis only when its rows are single elements, whose
      // reduced axes coalescing dropped: one output at a time walks them.)
      reduction_tiles();
    } else if (mapping_.split > 1) {
      reduction_split_blocks();
    } else if (mapping_.group == d_.block_size && mapping_.group > 1) {
      reduction_per_block();
    } else if (mapping_.group > 1) {
      reduction_per_lanes();
    } else {
      reduction_per_output();
    }
    if (params_) {
      // Sizes in locals: loads from P[] inside loops could alias the stores (char-typed bool buffers).
      std::string decls;
      for (size_t k = 0; k < params_->size(); ++k) {
        decls += literal_params_ ? fmt::format("  const {1} p{0} = {2};\n", k, d_.index_type, (*params_)[k])
                                 : fmt::format("  const {1} p{0} = P[{0}];\n", k, d_.index_type);
      }
      out_.insert(params_at, decls);
    }
    if (block_ > 0) line(d_.stream_fence);
    --indent_;
    line("}");
    return out_;
  }

 private:
  const std::string& buffer_type(ScalarType t) const {
    return t == ScalarType::boolean ? d_.bool_buffer_type : d_.type(t);
  }

  // 32-bit indices: every offset the kernel computes must fit (the domain's flat index, each access).
  void check_index_range() const {
    const int64_t limit = (int64_t{1} << (d_.index_bits - 1)) - 1;
    int64_t numel = 1;
    for (int64_t e : k_.domain) numel = e > 0 && numel > limit / e ? limit + 1 : numel * e;
    auto fits = [&](const Affine& a) {
      int64_t lo = a.constant, hi = a.constant;
      for (size_t d = 0; d < a.coef.size(); ++d) {
        const double span = static_cast<double>(a.coef[d]) * static_cast<double>(k_.domain[d] - 1);
        if (std::abs(span) > static_cast<double>(limit)) return false;
        (span < 0 ? lo : hi) += static_cast<int64_t>(span);
      }
      return lo >= -limit && hi <= limit;
    };
    bool ok = numel <= limit;
    for (const auto* code : all_code()) {
      for (const Instr& in : *code) ok = ok && (in.op != Op::Load || fits(in.access));
    }
    for (const auto* list : {&k_.body_stores, &k_.epilogue_stores, &k_.row_stores}) {
      for (const lower::Store& st : *list) ok = ok && fits(st.access);
    }
    TESSERA_CHECK(ok, "emitter: kernel '{}' has offsets beyond the {}-bit indices of dialect {}", k_.name,
                  d_.index_bits, d_.name);
  }

  // The types whose dialect requirements the module must meet: buffers (bool as its buffer type) and values.
  void note_types() {
    for (const auto* list : {&k_.input_types, &k_.output_types}) {
      for (ScalarType t : *list) helpers_.types.insert(t == ScalarType::boolean ? ScalarType::u8 : t);
    }
    for (const auto* code : all_code()) {
      for (const Instr& in : *code) helpers_.types.insert(in.type);
    }
    for (const auto& r : k_.reductions) helpers_.types.insert(r.acc_type);
  }
  std::vector<const std::vector<Instr>*> all_code() const {
    std::vector<const std::vector<Instr>*> code = {&k_.body, &k_.epilogue, &k_.row};
    for (const auto& walk : k_.chained) code.push_back(&walk);
    return code;
  }

  const std::string& idx() const { return d_.index_type; }
  void line(const std::string& s) { out_ += std::string(static_cast<size_t>(indent_) * 2, ' ') + s + "\n"; }
  void open(const std::string& s) {
    line(s.empty() ? "{" : s + " {");
    ++indent_;
  }
  void close() {
    --indent_;
    line("}");
  }
  void pragma(const std::string& p) {
    if (!p.empty()) out_ += p + "\n";
  }

  // Inside lane k of a vector step the innermost index is j + k.
  std::string var(size_t d) const {
    if (d != last_) return fmt::format("i{}", d);
    return lane_ > 0 ? fmt::format("(j + {})", lane_) : "j";
  }

  // A size in the code: a literal, or the next slot of P[] when writing a shared body.
  std::string num(int64_t v) {
    if (!params_) return fmt::format("{}", v);
    params_->push_back(v);
    return fmt::format("p{}", params_->size() - 1);
  }
  std::string extent(size_t d) { return num(k_.domain[d]); }

  // The offset an access reads or writes. Shared bodies keep the innermost stride literal when it is
  // 0 or +-1 (what decides vectorisation) and take every other number from P[].
  std::string index(const Affine& a) {
    std::vector<std::string> terms;
    bool negative_first = false;
    if (a.constant != 0) terms.push_back(params_ ? num(a.constant) : fmt::format("{}", a.constant));
    for (size_t d = 0; d < a.coef.size(); ++d) {
      const int64_t c = a.coef[d];
      if (c == 0) continue;
      std::string term;
      if (params_ && !(d == last_ && (c == 1 || c == -1))) {
        term = fmt::format("{} * {}", var(d), num(c));
      } else {
        const std::string mag = (c == 1 || c == -1) ? var(d) : fmt::format("{} * {}", var(d), c < 0 ? -c : c);
        if (c < 0 && terms.empty()) negative_first = true;
        term = c < 0 && !terms.empty() ? "- " + mag : mag;
      }
      terms.push_back(term);
    }
    if (terms.empty()) return "0";
    std::string s = negative_first ? "-" + terms[0] : terms[0];
    for (size_t i = 1; i < terms.size(); ++i) s += terms[i].rfind("- ", 0) == 0 ? " " + terms[i] : " + " + terms[i];
    return s;
  }

  // Row-major decomposition of `src` into the index variables of `dims` (outermost first).
  void decompose(const std::string& src, const std::vector<size_t>& dims) {
    if (dims.empty()) return;
    if (dims.size() == 1) {
      line(fmt::format("const {} {} = {};", idx(), var(dims[0]), src));
      return;
    }
    const bool narrow = !d_.narrow_division_type.empty() && shape_numel(k_.domain) <= int64_t{0x7fffffff};
    const std::string& div = narrow ? d_.narrow_division_type : idx();
    line(narrow ? fmt::format("{} rem = ({}){};", div, div, src) : fmt::format("{} rem = {};", div, src));
    for (size_t i = dims.size(); i-- > 1;) {
      const std::string e = narrow ? fmt::format("({}){}", div, extent(dims[i])) : extent(dims[i]);
      line(fmt::format("const {} {} = rem % {};", idx(), var(dims[i]), e));
      line(fmt::format("rem /= {};", e));
    }
    line(fmt::format("const {} {} = rem;", idx(), var(dims[0])));
  }

  // The text an instruction is referred to by: literals inline, accumulators by name, others vN.
  std::string ref(const std::vector<Instr>& code, char prefix, int id) const {
    const Instr& in = code.at(static_cast<size_t>(id));
    if (in.op == Op::Literal) return format_literal(in.type, in.fval, in.ival, d_);
    return value_name(code, prefix, static_cast<size_t>(id));
  }
  // vN, or vN_k for a value that varies along the innermost axis inside vector lane k.
  std::string value_name(const std::vector<Instr>& code, char prefix, size_t id) const {
    if (lane_ >= 0) {
      auto it = variant_.find(&code);
      if (it != variant_.end() && it->second.size() == code.size() && it->second[id]) {
        return fmt::format("{}{}_{}", prefix, id, lane_);
      }
    }
    return fmt::format("{}{}", prefix, id);
  }

  std::string expr(const std::vector<Instr>& code, char prefix, const Instr& in) {
    auto a = [&](int i) { return ref(code, prefix, in.args[static_cast<size_t>(i)]); };
    const std::string& t = d_.type(in.type);
    static const char* infix[] = {"+", "-", "*", "/", "==", "!=", "<", "<=", ">", ">="};
    switch (in.op) {
      case Op::Load: {
        // Inside a vector lane, a load of a whole vector is that lane's element of it.
        const auto vec = lane_ >= 0 ? vector_loads_.find(&in) : vector_loads_.end();
        const auto loaded = element_loads_.find(&in);  // loaded ahead (elementwise_grid_unrolled)
        const std::string element = vec != vector_loads_.end()      ? fmt::format("{}.v[{}]", vec->second, lane_)
                                    : loaded != element_loads_.end() ? loaded->second
                                                                     : fmt::format("in{}[{}]", in.buffer, index(in.access));
        // Bool buffers may be stored as bytes (gcc does not vectorise loads of _Bool).
        if (in.type == ScalarType::boolean && d_.bool_buffer_type != t) {
          return fmt::format("({} != {})", element, format_literal(ScalarType::u8, 0, 0, d_));
        }
        return element;
      }
      case Op::Literal:
        return format_literal(in.type, in.fval, in.ival, d_);
      case Op::Convert: {
        const ScalarType from = code.at(static_cast<size_t>(in.args[0])).type;
        if (lower::is_half(from)) return fmt::format("{}({})", d_.half_to_f32[from == ScalarType::f16 ? 0 : 1], a(0));
        if (lower::is_half(in.type)) {
          return fmt::format("{}({})", d_.f32_to_half[in.type == ScalarType::f16 ? 0 : 1], a(0));
        }
        if (in.type == ScalarType::boolean) return fmt::format("({} != {})", a(0), format_literal(from, 0, 0, d_));
        if (lower::is_float(from) && !lower::is_float(in.type)) {
          helpers_.conversions.insert({from, in.type});
          return fmt::format("{}({})", convert_helper_name(from, in.type), a(0));
        }
        return cast_to(t, a(0), d_);
      }
      case Op::Cast:
        return cast_to(t, a(0), d_);
      case Op::Neg:
        return narrow(in.type) ? cast_to(t, "-" + a(0), d_, true) : fmt::format("-{}", a(0));
      case Op::Not:
        return fmt::format("!{}", a(0));
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div: {
        const std::string e =
            fmt::format("{} {} {}", a(0), infix[static_cast<int>(in.op) - static_cast<int>(Op::Add)], a(1));
        return narrow(in.type) ? cast_to(t, e, d_, true) : e;
      }
      case Op::Eq:
      case Op::Ne:
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge:
        return fmt::format("({} {} {})", a(0), infix[static_cast<int>(in.op) - static_cast<int>(Op::Add)], a(1));
      case Op::And:
      case Op::Or:
        return fmt::format("({} {} {})", a(0), in.op == Op::And ? d_.and_op : d_.or_op, a(1));
      case Op::Select:
        return fmt::format("({} ? {} : {})", a(0), a(1), a(2));
      case Op::Call: {
        const size_t fn = static_cast<size_t>(in.fn), w = in.type == ScalarType::f32 ? 0 : 1;
        const std::string& f = d_.math_names[fn][w];
        // The dialect's own definition, and the f32 one an f64 helper may call.
        if (!d_.math_helpers[fn][w].empty()) helpers_.math.insert({static_cast<int>(fn), static_cast<int>(w)});
        if (w == 1 && !d_.math_helpers[fn][1].empty() && !d_.math_helpers[fn][0].empty()) {
          helpers_.math.insert({static_cast<int>(fn), 0});
        }
        return in.args[1] >= 0 ? fmt::format("{}({}, {})", f, a(0), a(1)) : fmt::format("{}({})", f, a(0));
      }
      case Op::IsNan:
        return fmt::format("{}({})", d_.isnan_fn, a(0));
      case Op::IsInf:
        return fmt::format("{}({})", d_.isinf_fn, a(0));
      case Op::Reduced:
        return reduced_ref(static_cast<size_t>(in.ival));
    }
    fail("emitter: unknown instruction");
  }

  enum class Part { All, Invariant, Variant };

  // Whether each instruction changes along the innermost loop (over the last axis): values that do
  // not are computed once before that loop (broadcast operands, scalars).
  const std::vector<bool>& variant(const std::vector<Instr>& code) {
    auto& v = variant_[&code];
    if (v.size() == code.size()) return v;
    v.assign(code.size(), false);
    for (size_t i = 0; i < code.size(); ++i) {
      const Instr& in = code[i];
      bool var = (in.op == Op::Load && in.access.coef[last_] != 0) || (in.op == Op::Reduced && tiled());
      for (int a : in.args) var = var || (a >= 0 && v[static_cast<size_t>(a)]);
      v[i] = var;
    }
    return v;
  }

  void instrs(const std::vector<Instr>& code, char prefix, Part part = Part::All) {
    const std::vector<bool>& var = variant(code);
    for (size_t i = 0; i < code.size(); ++i) {
      const Instr& in = code[i];
      if (in.op == Op::Literal) continue;
      if ((part == Part::Invariant && var[i]) || (part == Part::Variant && !var[i])) continue;
      line(fmt::format("const {} {} = {};", d_.type(in.type), value_name(code, prefix, i), expr(code, prefix, in)));
    }
  }

  // A store's value; strict dialects convert bools to their buffer type.
  std::string stored(const std::vector<Instr>& code, char prefix, const lower::Store& s) const {
    const std::string v = ref(code, prefix, s.value);
    const bool bytes = k_.output_types[static_cast<size_t>(s.output)] == ScalarType::boolean &&
                       d_.bool_buffer_type != d_.type(ScalarType::boolean);
    return d_.strict_types && bytes ? cast_to(d_.bool_buffer_type, v, d_) : v;
  }

  void stores(const std::vector<lower::Store>& list, const std::vector<Instr>& code, char prefix) {
    for (size_t i = 0; i < list.size(); ++i) {
      const lower::Store& s = list[i];
      if (&list == &k_.body_stores && i < streamed_.size() && streamed_[i]) {
        line(fmt::format("s{}[j - jb] = {};", i, ref(code, prefix, s.value)));
      } else if (&list == &k_.body_stores && lane_ >= 0 && i < vector_stores_.size() && vector_stores_[i]) {
        line(fmt::format("S{}.v[{}] = {};", i, lane_, stored(code, prefix, s)));
      } else {
        line(fmt::format("out{}[{}] = {};", s.output, index(s.access), stored(code, prefix, s)));
      }
    }
  }

  // --- streaming stores -------------------------------------------------------------------------
  int64_t buffer_bytes(const lower::Store& s) const {
    const ScalarType t = k_.output_types[static_cast<size_t>(s.output)];
    return t == ScalarType::boolean ? 1 : lower::scalar_bits(t) / 8;
  }

  // Streams the body stores that write contiguously along the innermost loop, when the kernel is
  // elementwise, its rows are long enough and the streamed outputs together reach the dialect's size.
  void plan_streaming() {
    if (d_.schedule != Schedule::RowLoops || d_.stream_store_fn.empty() || k_.has_reduction()) return;
    if (k_.domain[last_] < d_.stream_inner_min) return;
    int64_t elements = 1;
    for (int64_t e : k_.domain) elements *= e;
    std::vector<bool> streamed(k_.body_stores.size(), false);
    int64_t bytes = 0, bytes_per_element = 0;
    for (size_t i = 0; i < k_.body_stores.size(); ++i) {
      const lower::Store& s = k_.body_stores[i];
      if (s.access.coef[last_] != 1) continue;
      streamed[i] = true;
      bytes += elements * buffer_bytes(s);
      bytes_per_element += buffer_bytes(s);
    }
    if (bytes_per_element == 0 || bytes < d_.stream_min_bytes) return;
    int64_t block = d_.stream_block;
    while (block > 64 && block * bytes_per_element > d_.stream_block_bytes) block /= 2;
    streamed_ = std::move(streamed);
    block_ = block;
    helpers_.stream = true;
  }

  // The innermost loop over [lo, hi) in blocks whose ends are multiples of block_ (whole cache lines
  // of every output when rows start on a line): compute a block into the buffers, then copy it out.
  void streamed_inner_loop(const std::string& lo, const std::string& hi) {
    open(fmt::format("for ({} jb = {}; jb < {};)", idx(), lo, hi));
    line(fmt::format("const {1} jn = jb - jb % {0} + {0};", block_, idx()));
    line(fmt::format("const {1} je = jn < {0} ? jn : {0};", hi, idx()));
    pragma(d_.inner_loop_pragma);
    open(fmt::format("for ({} j = jb; j < je; ++j)", idx()));
    instrs(k_.body, 'v', Part::Variant);
    stores(k_.body_stores, k_.body, 'v');
    close();
    open("");
    line(fmt::format("const {} j = jb;", idx()));
    for (size_t i = 0; i < streamed_.size(); ++i) {
      if (!streamed_[i]) continue;
      const lower::Store& s = k_.body_stores[i];
      line(fmt::format("{}(out{} + ({}), s{}, (je - jb) * {});", d_.stream_store_fn, s.output, index(s.access), i,
                       buffer_bytes(s)));
    }
    close();
    line("jb = je;");
    close();
  }

  // --- reductions -------------------------------------------------------------------------------
  bool tiled() const { return d_.schedule == Schedule::RowLoops && !k_.reduced[last_] && !k_.has_row_phase(); }
  std::string acc(size_t r) const { return tiled() ? fmt::format("a{}[j - jb]", r) : fmt::format("a{}", r); }
  std::string nan_flag(size_t r) const { return tiled() ? fmt::format("n{}[j - jb]", r) : fmt::format("n{}", r); }
  bool tracks_nan(size_t r) const {
    const auto& red = k_.reductions[r];
    return lower::is_float(red.acc_type) && (red.kind == ReduceKind::Max || red.kind == ReduceKind::Min);
  }
  std::string reduced_ref(size_t r) const {
    if (!tracks_nan(r)) return acc(r);
    return fmt::format("({} ? {} : {})", nan_flag(r),
                       d_.nan_literal[k_.reductions[r].acc_type == ScalarType::f32 ? 0 : 1], acc(r));
  }

  std::string identity(size_t r) const {
    const auto& red = k_.reductions[r];
    const ScalarType t = red.acc_type;
    switch (red.kind) {
      case ReduceKind::Sum:
        return format_literal(t, 0, 0, d_);
      case ReduceKind::Prod:
        return format_literal(t, 1, 1, d_);
      case ReduceKind::Max:
      case ReduceKind::Min: {
        const bool is_max = red.kind == ReduceKind::Max;
        if (lower::is_float(t)) return format_literal(t, is_max ? -INFINITY : INFINITY, 0, d_);
        int64_t lo = 0, hi = 1;
        if (t == ScalarType::i8) lo = INT8_MIN, hi = INT8_MAX;
        if (t == ScalarType::u8) lo = 0, hi = UINT8_MAX;
        if (t == ScalarType::i32) lo = INT32_MIN, hi = INT32_MAX;
        if (t == ScalarType::i64) lo = INT64_MIN, hi = INT64_MAX;
        return format_literal(t, 0, is_max ? lo : hi, d_);
      }
    }
    return "0";
  }

  // The reductions of the walk being written (walk_: 0 the body, k chained walk k).
  bool in_walk(size_t r) const { return k_.reductions[r].walk == walk_; }
  const std::vector<Instr>& walk_code() const {
    return walk_ == 0 ? k_.body : k_.chained[static_cast<size_t>(walk_ - 1)];
  }
  char walk_prefix() const { return walk_prefix(walk_); }
  static char walk_prefix(int walk) {
    static const char prefixes[] = "vcdfghkmqtuxyz";  // none another name of the kernels starts with
    TESSERA_CHECK(walk >= 0 && walk + 1 < static_cast<int>(sizeof prefixes), "emitter: more than {} chained walks",
                  sizeof prefixes - 2);
    return prefixes[walk];
  }

  void accumulate() {
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      if (!in_walk(r)) continue;
      const auto& red = k_.reductions[r];
      const std::string v = ref(walk_code(), walk_prefix(), red.value), a = acc(r);
      switch (red.kind) {
        case ReduceKind::Sum:
          line(fmt::format("{} += {};", a, v));
          break;
        case ReduceKind::Prod:
          line(fmt::format("{} *= {};", a, v));
          break;
        case ReduceKind::Max:
          line(fmt::format("{0} = {1} > {0} ? {1} : {0};", a, v));
          break;
        case ReduceKind::Min:
          line(fmt::format("{0} = {1} < {0} ? {1} : {0};", a, v));
          break;
      }
      if (tracks_nan(r)) {
        line(fmt::format(fmt::runtime(d_.nan_flag_update), fmt::arg("flag", nan_flag(r)), fmt::arg("v", v)));
      }
    }
  }

  std::string simd_clauses() const {
    std::string s;
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      if (!in_walk(r)) continue;
      const auto& red = k_.reductions[r];
      if (narrow(red.acc_type)) return "";  // OpenMP reductions over bool/bytes: leave the loop scalar
      static const char* ops[] = {"+", "*", "max", "min"};
      s += fmt::format("{}reduction({}:a{})", s.empty() ? "" : " ", ops[static_cast<int>(red.kind)], r);
      if (tracks_nan(r)) s += fmt::format(" reduction(|:n{})", r);
    }
    return s;
  }

  std::vector<size_t> dims_where(bool reduced) const {
    std::vector<size_t> dims;
    for (size_t d = 0; d < k_.domain.size(); ++d) {
      if (k_.reduced[d] == reduced) dims.push_back(d);
    }
    return dims;
  }

  std::string range_loop(const std::string& v) const {
    if (d_.schedule == Schedule::RowLoops) return fmt::format("for ({1} {0} = begin; {0} < end; ++{0})", v, idx());
    return fmt::format("for ({3} {0} = begin + {1}; {0} < end; {0} += {2})", v, d_.thread_index, d_.thread_count,
                       idx());
  }

  // Splits the flat range [begin, end) of the axes up to the last one into rows: j0..j1 of the
  // last axis for one value of the others (decomposed from `row`).
  void open_rows(const std::vector<size_t>& outer) {
    const std::string n = extent(last_);
    line(fmt::format("{} flat = begin;", idx()));
    open("while (flat < end)");
    line(fmt::format("const {} row = flat / {};", idx(), n));
    line(fmt::format("const {} j0 = flat - row * {};", idx(), n));
    line(fmt::format("const {1} j1 = end - flat < {0} - j0 ? j0 + (end - flat) : {0};", n, idx()));
    decompose("row", outer);
  }
  void close_rows() {
    line("flat += j1 - j0;");
    close();
  }

  void elementwise_rows() {
    if (block_ > 0) {
      std::vector<size_t> outer;
      for (size_t d = 0; d < last_; ++d) outer.push_back(d);
      if (!outer.empty()) open_rows(outer);
      instrs(k_.body, 'v', Part::Invariant);
      outer.empty() ? streamed_inner_loop("begin", "end") : streamed_inner_loop("j0", "j1");
      if (!outer.empty()) close_rows();
      return;
    }
    if (k_.domain.size() == 1) {
      instrs(k_.body, 'v', Part::Invariant);
      pragma(d_.inner_loop_pragma);
      open(fmt::format("for ({} j = begin; j < end; ++j)", idx()));
    } else {
      std::vector<size_t> outer;
      for (size_t d = 0; d < last_; ++d) outer.push_back(d);
      open_rows(outer);
      instrs(k_.body, 'v', Part::Invariant);
      pragma(d_.inner_loop_pragma);
      open(fmt::format("for ({} j = j0; j < j1; ++j)", idx()));
    }
    instrs(k_.body, 'v', Part::Variant);
    stores(k_.body_stores, k_.body, 'v');
    close();
    if (k_.domain.size() > 1) close_rows();
  }

  void elementwise_grid() {
    if (mapping_.unroll > 1 && mapping_.vector == 1) return elementwise_grid_unrolled(mapping_.unroll);
    open(range_loop("u"));  // not "flat": a GLSL keyword
    std::vector<size_t> all;
    for (size_t d = 0; d < k_.domain.size(); ++d) all.push_back(d);
    decompose("u", all);
    instrs(k_.body, 'v');
    stores(k_.body_stores, k_.body, 'v');
    close();
  }

  // `unroll` elements per thread step, a grid stride apart (so a warp's accesses stay consecutive):
  // every load of all of them first, then the arithmetic and stores: more loads in flight per thread.
  void elementwise_grid_unrolled(int unroll) {
    open(fmt::format("for ({0} u0 = begin + {1}; u0 < end; u0 += {2} * {3})", idx(), d_.thread_index,
                     d_.thread_count, unroll));
    for (size_t i = 0; i < k_.body.size(); ++i) {
      const Instr& in = k_.body[i];
      if (in.op != Op::Load) continue;
      line(fmt::format("{} L{}[{}];", buffer_type(k_.input_types[static_cast<size_t>(in.buffer)]), i, unroll));
    }
    std::vector<size_t> all;
    for (size_t d = 0; d < k_.domain.size(); ++d) all.push_back(d);
    auto open_element = [&] {
      pragma(d_.unroll_pragma);
      open(fmt::format("for (int q = 0; q < {}; ++q)", unroll));
      line(fmt::format("const {0} u = u0 + q * {1};", idx(), d_.thread_count));
      open("if (u < end)");
      decompose("u", all);
    };
    open_element();
    for (size_t i = 0; i < k_.body.size(); ++i) {
      const Instr& in = k_.body[i];
      if (in.op == Op::Load) line(fmt::format("L{0}[q] = in{1}[{2}];", i, in.buffer, index(in.access)));
    }
    close();
    close();
    for (size_t i = 0; i < k_.body.size(); ++i) {
      if (k_.body[i].op == Op::Load) element_loads_[&k_.body[i]] = fmt::format("L{}[q]", i);
    }
    open_element();
    instrs(k_.body, 'v');
    stores(k_.body_stores, k_.body, 'v');
    close();
    close();
    element_loads_.clear();
    close();
  }

  // Elementwise with whole vectors: each thread step takes `vector` consecutive elements of a row,
  // loads every contiguous buffer as one vector (16 bytes on CUDA), computes the lanes and stores
  // vectors; buffers whose addresses turn out misaligned take the scalar loop instead.
  void elementwise_vectors() {
    const int v = mapping_.vector;
    vector_stores_.assign(k_.body_stores.size(), false);
    std::vector<std::string> misalignment;
    std::set<std::string> checked;
    auto check_buffer = [&](const std::string& name, ScalarType t) {
      if (!checked.insert(name).second) return;
      const int bytes = t == ScalarType::boolean ? 1 : lower::scalar_bits(t) / 8;
      misalignment.push_back(fmt::format("({} & {})", fmt::format(fmt::runtime(d_.address_bits), fmt::arg("p", name)),
                                         bytes * v - 1));
    };
    for (size_t i = 0; i < k_.body.size(); ++i) {
      const Instr& in = k_.body[i];
      if (in.op != Op::Load || !vector_aligned(in.access, v)) continue;
      vector_loads_[&in] = fmt::format("L{}", i);
      check_buffer(fmt::format("in{}", in.buffer), k_.input_types[static_cast<size_t>(in.buffer)]);
    }
    for (size_t i = 0; i < k_.body_stores.size(); ++i) {
      const lower::Store& st = k_.body_stores[i];
      if (!vector_aligned(st.access, v)) continue;
      vector_stores_[i] = true;
      check_buffer(fmt::format("out{}", st.output), k_.output_types[static_cast<size_t>(st.output)]);
    }
    if (misalignment.empty()) {  // nothing contiguous after all
      elementwise_grid();
      return;
    }
    helpers_.vector = true;
    auto vec_type = [&](ScalarType t) {
      return fmt::format(fmt::runtime(d_.vector_type), fmt::arg("type", buffer_type(t)), fmt::arg("n", v));
    };
    // `unroll` vectors per thread step, all loaded before any is computed: more loads in flight.
    const int unroll = std::max(1, d_.vector_unroll);
    line(fmt::format("const {} tsr_vectors = ({}) == 0;", d_.type(ScalarType::boolean), fmt::join(misalignment, " | ")));
    open("if (tsr_vectors)");
    open(fmt::format("for ({0} u0 = begin + {1} * {3}; u0 < end; u0 += {2} * {4})", idx(), d_.thread_index,
                     d_.thread_count, v, v * unroll));
    for (auto& [in, name] : vector_loads_) {
      const size_t i = static_cast<size_t>(in - k_.body.data());
      line(fmt::format("{} L{}[{}];", vec_type(k_.input_types[static_cast<size_t>(in->buffer)]), i, unroll));
      name = fmt::format("L{}[q]", i);
    }
    std::vector<size_t> all;
    for (size_t d = 0; d < k_.domain.size(); ++d) all.push_back(d);
    auto open_vector = [&] {
      open(fmt::format("for (int q = 0; q < {}; ++q)", unroll));
      line(fmt::format("const {0} u = u0 + q * {1} * {2};", idx(), d_.thread_count, v));
      open("if (u < end)");
      decompose("u", all);
    };
    pragma(d_.unroll_pragma);
    open_vector();
    for (size_t i = 0; i < k_.body.size(); ++i) {
      const Instr& in = k_.body[i];
      if (!vector_loads_.count(&in)) continue;
      const std::string t = vec_type(k_.input_types[static_cast<size_t>(in.buffer)]);
      line(fmt::format("L{0}[q] = *(const {1}*)(in{2} + ({3}));", i, t, in.buffer, index(in.access)));
    }
    close();
    close();
    pragma(d_.unroll_pragma);
    open_vector();
    instrs(k_.body, 'v', Part::Invariant);
    for (size_t i = 0; i < k_.body_stores.size(); ++i) {
      if (vector_stores_[i]) {
        line(fmt::format("{} S{};", vec_type(k_.output_types[static_cast<size_t>(k_.body_stores[i].output)]), i));
      }
    }
    for (lane_ = 0; lane_ < v; ++lane_) {
      instrs(k_.body, 'v', Part::Variant);
      stores(k_.body_stores, k_.body, 'v');
    }
    lane_ = -1;
    for (size_t i = 0; i < k_.body_stores.size(); ++i) {
      if (!vector_stores_[i]) continue;
      const lower::Store& st = k_.body_stores[i];
      line(fmt::format("*({}*)(out{} + ({})) = S{};", vec_type(k_.output_types[static_cast<size_t>(st.output)]),
                       st.output, index(st.access), i));
    }
    close();
    close();
    close();
    close();
    vector_loads_.clear();
    vector_stores_.clear();
    open("else");
    elementwise_grid();
    close();
  }

  // --- cooperative reductions (GridStride dialects with a warp) ----------------------------------
  void declare_accumulators() {
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      line(fmt::format("{} a{} = {};", d_.type(k_.reductions[r].acc_type), r, identity(r)));
      if (tracks_nan(r)) line(fmt::format(fmt::runtime(d_.nan_flag_decl), fmt::arg("flag", nan_flag(r))) + ";");
    }
  }

  // --- row phase (row_phase.cpp) -------------------------------------------------------------
  void row_loops(bool hoist);
  void strided_row_loop(const std::string& first, int step);
  void share_through_tree(int lanes);
  void share_block_result(int warps);

  // This thread's share of one output's reduced elements: flat indices first, first + step, ...
  // (walk_ > 0: the chained walk's code, which stores nothing.)
  void strided_reduced_loop(const std::string& first, int step) {
    open(fmt::format("for ({0} r = {1}; r < {2}; r += {3})", idx(), first, num(k_.work_per_unit()), step));
    decompose("r", dims_where(true));
    instrs(walk_code(), walk_prefix());
    if (walk_ == 0) stores(k_.body_stores, k_.body, 'v');
    accumulate();
    close();
  }

  // acc(r) = acc(r) (op) other, for every reduction; `flag` gives the other's NaN flag of reduction r.
  void combine(const std::function<std::string(size_t)>& other, const std::function<std::string(size_t)>& flag) {
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      if (!in_walk(r)) continue;
      const std::string a = acc(r), o = other(r);
      switch (k_.reductions[r].kind) {
        case ReduceKind::Sum:
          line(fmt::format("{} += {};", a, o));
          break;
        case ReduceKind::Prod:
          line(fmt::format("{} *= {};", a, o));
          break;
        case ReduceKind::Max:
        case ReduceKind::Min: {
          const char* cmp = k_.reductions[r].kind == ReduceKind::Max ? ">" : "<";
          line(fmt::format("{{ const {0} t = {1}; {2} = t {3} {2} ? t : {2}; }}",
                           d_.type(k_.reductions[r].acc_type), o, a, cmp));
          break;
        }
      }
      if (tracks_nan(r)) {
        line(fmt::format(fmt::runtime(d_.nan_flag_merge), fmt::arg("a", nan_flag(r)), fmt::arg("b", flag(r))));
      }
    }
  }

  std::string shuffled(ScalarType t, const std::string& v, int m) const {
    // Shuffles move 32-bit words or wider: narrower values travel as int.
    const std::string e = fmt::format(fmt::runtime(d_.shuffle_xor), fmt::arg("v", narrow(t) ? "(int)" + v : v),
                                      fmt::arg("m", m));
    return narrow(t) ? cast_to(d_.type(t), e, d_) : e;
  }

  // Whether this kernel's lanes combine through the shared-memory tree.
  bool tree_lanes() const { return d_.lanes_through_shared && mapping_.group > 1; }

  // The tree's type for an accumulator of type t: bytes travel as int (as through shuffles).
  std::string slot_type(ScalarType t) const {
    return t == ScalarType::i8 || t == ScalarType::u8 ? d_.type(ScalarType::i32) : d_.type(t);
  }

  // One slot per thread of the block for each accumulator (and NaN flag), at module scope.
  void declare_tree_slots() {
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", slot_type(k_.reductions[r].acc_type)),
                       fmt::arg("name", fmt::format("tsr_tree{}", r)), fmt::arg("size", d_.block_size)) + ";");
      if (tracks_nan(r)) {
        line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", d_.nan_flag_type),
                         fmt::arg("name", fmt::format("tsr_treen{}", r)), fmt::arg("size", d_.block_size)) + ";");
      }
    }
  }

  // Groups of `lanes` aligned threads through shared memory: at each level the lower half of a group
  // takes in the slot `m` above it (the butterfly's order, fixed whatever the device). Afterwards the
  // group's first thread holds its result. Every thread of the block must get here.
  void combine_lanes_in_tree(int lanes) {
    const std::string li = fmt::format("tsr_li{}", tree_level_++);
    line(fmt::format("const {} {} = {};", idx(), li, d_.local_index));
    line(d_.barrier);  // the slots' previous readers are done
    auto store = [&] {
      for (size_t r = 0; r < k_.reductions.size(); ++r) {
        if (!in_walk(r)) continue;
        const ScalarType t = k_.reductions[r].acc_type;
        const std::string v = slot_type(t) == d_.type(t) ? acc(r) : cast_to(slot_type(t), acc(r), d_);
        line(fmt::format("tsr_tree{}[{}] = {};", r, li, v));
        if (tracks_nan(r)) line(fmt::format("tsr_treen{}[{}] = {};", r, li, nan_flag(r)));
      }
    };
    store();
    for (int m = lanes / 2; m >= 1; m /= 2) {
      line(d_.barrier);
      open(fmt::format("if ({} % {} < {})", li, lanes, m));
      combine(
          [&](size_t r) {
            const ScalarType t = k_.reductions[r].acc_type;
            const std::string slot = fmt::format("tsr_tree{}[{} + {}]", r, li, m);
            return slot_type(t) == d_.type(t) ? slot : cast_to(d_.type(t), slot, d_);
          },
          [&](size_t r) { return fmt::format("tsr_treen{}[{} + {}]", r, li, m); });
      if (m > 1) store();
      close();
    }
  }

  // A butterfly over groups of `lanes` aligned lanes: afterwards each lane holds its group's result
  // (through shared memory: the group's first lane).
  void combine_lanes(int lanes) {
    if (d_.lanes_through_shared) {
      combine_lanes_in_tree(lanes);
      return;
    }
    for (int m = lanes / 2; m >= 1; m /= 2) {
      combine([&](size_t r) { return shuffled(k_.reductions[r].acc_type, acc(r), m); },
              [&](size_t r) { return fmt::format(fmt::runtime(d_.shuffle_xor), fmt::arg("v", nan_flag(r)), fmt::arg("m", m)); });
    }
  }

  // A row kernel may store nothing per kept element.
  bool has_epilogue() const { return !k_.epilogue_stores.empty(); }

  void epilogue_part() {
    instrs(k_.epilogue, 'e');
    stores(k_.epilogue_stores, k_.epilogue, 'e');
  }

  // A group of `group` lanes of one warp per output. The loop over outputs steps a whole warp at a
  // time, so every lane reaches the shuffles (lanes past the end add nothing and store nothing).
  void reduction_per_lanes() {
    const int g = mapping_.group, w = d_.warp_size;
    const std::string& b = d_.type(ScalarType::boolean);
    open("");
    line(fmt::format("const {} tsr_t = {};", idx(), d_.thread_index));
    line(fmt::format("const {} tsr_lane = tsr_t % {};", idx(), g));
    open(fmt::format("for ({0} ow = begin + tsr_t / {1} * {2}; ow < end; ow += {3} / {4})", idx(), w, w / g,
                     d_.thread_count, g));
    line(fmt::format("const {} o = ow + tsr_t % {} / {};", idx(), w, g));
    line(fmt::format("const {} tsr_live = o < end;", b));
    decompose("o", dims_where(false));
    declare_accumulators();
    open("if (tsr_live)");
    strided_reduced_loop("tsr_lane", g);
    close();
    combine_lanes(g);
    if (k_.has_row_phase() && tree_lanes()) share_through_tree(g);
    for (walk_ = 1; walk_ <= static_cast<int>(k_.chained.size()); ++walk_) {
      open("if (tsr_live)");
      strided_reduced_loop("tsr_lane", g);
      close();
      combine_lanes(g);
      if (tree_lanes()) share_through_tree(g);
    }
    walk_ = 0;
    if (has_epilogue()) {
      open("if (tsr_live && tsr_lane == 0)");
      epilogue_part();
      close();
    }
    if (!k_.row_stores.empty()) {
      open("if (tsr_live)");
      strided_row_loop("tsr_lane", g);
      close();
    }
    close();
    close();
  }

  // The block-wide combine of reduction_per_block: afterwards thread 0 holds the block's result.
  void combine_block(int warps) {
    const int w = d_.warp_size;
    if (warps == 1) {  // the block is one warp (a shared-memory tree)
      combine_lanes(w);
      return;
    }
    combine_lanes(w);
    open(fmt::format("if (tsr_l % {} == 0)", w));
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      if (!in_walk(r)) continue;
      line(fmt::format("tsr_sh{}[tsr_l / {}] = {};", r, w, acc(r)));
      if (tracks_nan(r)) line(fmt::format("tsr_shn{}[tsr_l / {}] = {};", r, w, nan_flag(r)));
    }
    close();
    line(d_.barrier);
    open(fmt::format("if (tsr_l < {})", w));
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      if (!in_walk(r)) continue;
      line(fmt::format("{} = tsr_l < {} ? tsr_sh{}[tsr_l] : {};", acc(r), warps, r, identity(r)));
      if (tracks_nan(r)) line(fmt::format("{} = tsr_l < {} ? tsr_shn{}[tsr_l] : 0;", nan_flag(r), warps, r));
    }
    combine_lanes(w);
    close();
  }

  void declare_block_shared(int warps) {
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", d_.type(k_.reductions[r].acc_type)),
                       fmt::arg("name", fmt::format("tsr_sh{}", r)), fmt::arg("size", warps)) + ";");
      if (tracks_nan(r)) {
        line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", "int"),
                         fmt::arg("name", fmt::format("tsr_shn{}", r)), fmt::arg("size", warps)) + ";");
      }
    }
  }

  // `split` blocks per output, each over one chunk of the reduced range; the last block to finish
  // an output (its counter) combines the partials in block order and runs the epilogue.
  void reduction_split_blocks() {
    const int bs = d_.block_size, warps = bs / d_.warp_size, split = mapping_.split;
    const int64_t outputs = k_.range(), chunk = split_chunk(k_, d_), work = k_.work_per_unit();
    line(fmt::format(fmt::runtime(d_.scratch_binding), fmt::arg("k", k_.output_types.size())));
    declare_block_shared(warps);
    line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", "int"), fmt::arg("name", "tsr_last"),
                     fmt::arg("size", 1)) + ";");
    int64_t offset = 0;
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      const std::string& t = d_.type(k_.reductions[r].acc_type);
      line(fmt::format("{0} {1}* tsr_part{2} = ({0} {1}*)(tsr_scratch + {3});", d_.volatile_qualifier, t, r, offset));
      offset += outputs * split * 8;
      if (tracks_nan(r)) {
        line(fmt::format("{0} int* tsr_partn{1} = ({0} int*)(tsr_scratch + {2});", d_.volatile_qualifier, r, offset));
        offset += outputs * split * 8;
      }
    }
    line(fmt::format("unsigned int* tsr_count = (unsigned int*)(tsr_scratch + {});", offset));
    line(fmt::format("const {} tsr_l = {};", idx(), d_.local_index));
    open(fmt::format("for ({0} ob = begin * {3} + {1}; ob < end * {3}; ob += {2})", idx(), d_.block_index,
                     d_.block_count, split));
    line(fmt::format("const {0} o = ob / {1}, tsr_s = ob % {1};", idx(), split));
    decompose("o", dims_where(false));
    declare_accumulators();
    line(fmt::format("const {0} tsr_end = tsr_s * {1} + {1} < {2} ? tsr_s * {1} + {1} : {2};", idx(), num(chunk),
                     num(work)));
    open(fmt::format("for ({0} r = tsr_s * {1} + tsr_l; r < tsr_end; r += {2})", idx(), num(chunk), bs));
    decompose("r", dims_where(true));
    instrs(k_.body, 'v');
    stores(k_.body_stores, k_.body, 'v');
    accumulate();
    close();
    combine_block(warps);
    open("if (tsr_l == 0)");
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      line(fmt::format("tsr_part{}[o * {} + tsr_s] = {};", r, split, acc(r)));
      if (tracks_nan(r)) line(fmt::format("tsr_partn{}[o * {} + tsr_s] = {};", r, split, nan_flag(r)));
    }
    line(d_.memory_fence);
    line(fmt::format("tsr_last[0] = {} == {}u;",
                     fmt::format(fmt::runtime(d_.atomic_increment), fmt::arg("p", "tsr_count + o")), split - 1));
    close();
    line(d_.barrier);
    open("if (tsr_last[0] && tsr_l == 0)");
    line(d_.memory_fence);
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      line(fmt::format("{} = {};", acc(r), identity(r)));
      if (tracks_nan(r)) line(fmt::format("{} = 0;", nan_flag(r)));
    }
    open(fmt::format("for (int q = 0; q < {}; ++q)", split));
    combine([&](size_t r) { return fmt::format("tsr_part{}[o * {} + q]", r, split); },
            [&](size_t r) { return fmt::format("tsr_partn{}[o * {} + q]", r, split); });
    close();
    line("tsr_count[o] = 0u;  // ready for the next run");
    epilogue_part();
    close();
    line(d_.barrier);  // tsr_last and the shared slots are rewritten for the next output
    close();
  }

  // One block per output: lanes combine within each warp, warps through shared memory.
  void reduction_per_block() {
    const int bs = d_.block_size, warps = bs / d_.warp_size;
    if (warps > 1) declare_block_shared(warps);
    line(fmt::format("const {} tsr_l = {};", idx(), d_.local_index));
    open(fmt::format("for ({0} o = begin + {1}; o < end; o += {2})", idx(), d_.block_index, d_.block_count));
    decompose("o", dims_where(false));
    declare_accumulators();
    strided_reduced_loop("tsr_l", bs);
    combine_block(warps);
    if (k_.has_row_phase()) share_block_result(warps);
    for (walk_ = 1; walk_ <= static_cast<int>(k_.chained.size()); ++walk_) {
      strided_reduced_loop("tsr_l", bs);
      combine_block(warps);
      share_block_result(warps);
    }
    walk_ = 0;
    if (has_epilogue()) {
      open("if (tsr_l == 0)");
      epilogue_part();
      close();
    }
    if (!k_.row_stores.empty()) strided_row_loop("tsr_l", bs);
    // The shared slots are rewritten for the next output (a tree waits before it writes them).
    if (!tree_lanes()) line(d_.barrier);
    close();
  }


  void reduction_per_output() {
    open(range_loop("o"));
    decompose("o", dims_where(false));
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      line(fmt::format("{} a{} = {};", d_.type(k_.reductions[r].acc_type), r, identity(r)));
      if (tracks_nan(r)) line(fmt::format(fmt::runtime(d_.nan_flag_decl), fmt::arg("flag", nan_flag(r))) + ";");
    }
    const std::vector<size_t> red = dims_where(true);
    // On RowLoops the innermost loop runs over the last axis (reduced here): hoist what it does not
    // change. (A row kernel of one-element rows has no reduced axis left: nothing to hoist out of.)
    const bool hoist = d_.schedule == Schedule::RowLoops && !red.empty();
    for (walk_ = 0; walk_ <= static_cast<int>(k_.chained.size()); ++walk_) {
      const std::vector<Instr>& code = walk_code();
      for (size_t i = 0; i < red.size(); ++i) {
        if (i + 1 == red.size()) {
          if (hoist) instrs(code, walk_prefix(), Part::Invariant);
          const std::string clauses = simd_clauses();
          if (!clauses.empty() && !d_.simd_reduction_pragma.empty()) {
            pragma(fmt::format(fmt::runtime(d_.simd_reduction_pragma), clauses));
          }
        }
        open(fmt::format("for ({2} {0} = 0; {0} < {1}; ++{0})", var(red[i]), extent(red[i]), idx()));
      }
      instrs(code, walk_prefix(), hoist ? Part::Variant : Part::All);
      if (walk_ == 0) stores(k_.body_stores, k_.body, 'v');
      accumulate();
      for (size_t i = 0; i < red.size(); ++i) close();
    }
    walk_ = 0;
    instrs(k_.epilogue, 'e');
    stores(k_.epilogue_stores, k_.epilogue, 'e');
    if (!k_.row_stores.empty()) row_loops(hoist);
    close();
  }

  void reduction_tiles() {
    TESSERA_CHECK(!k_.has_row_phase(), "emitter: kernel '{}' has a row phase but keeps its innermost axis", k_.name);
    const int tile = d_.reduction_tile;
    std::vector<size_t> outer_kept;
    for (size_t d : dims_where(false)) {
      if (d != last_) outer_kept.push_back(d);
    }
    open_rows(outer_kept);
    open(fmt::format("for ({} jb = j0; jb < j1; jb += {})", idx(), tile));
    line(fmt::format("const {1} je = j1 - jb < {0} ? j1 : jb + {0};", tile, idx()));
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      line(fmt::format("{} a{}[{}];", d_.type(k_.reductions[r].acc_type), r, tile));
      if (tracks_nan(r)) line(fmt::format("unsigned char n{}[{}];", r, tile));
    }
    open(fmt::format("for ({} j = jb; j < je; ++j)", idx()));
    for (size_t r = 0; r < k_.reductions.size(); ++r) {
      line(fmt::format("{} = {};", acc(r), identity(r)));
      if (tracks_nan(r)) line(fmt::format("{} = 0;", nan_flag(r)));
    }
    close();
    const std::vector<size_t> red = dims_where(true);
    for (size_t d : red) open(fmt::format("for ({2} {0} = 0; {0} < {1}; ++{0})", var(d), extent(d), idx()));
    instrs(k_.body, 'v', Part::Invariant);
    pragma(d_.inner_loop_pragma);
    open(fmt::format("for ({} j = jb; j < je; ++j)", idx()));
    instrs(k_.body, 'v', Part::Variant);
    stores(k_.body_stores, k_.body, 'v');
    accumulate();
    close();
    for (size_t i = 0; i < red.size(); ++i) close();
    instrs(k_.epilogue, 'e', Part::Invariant);
    pragma(d_.inner_loop_pragma);
    open(fmt::format("for ({} j = jb; j < je; ++j)", idx()));
    instrs(k_.epilogue, 'e', Part::Variant);
    stores(k_.epilogue_stores, k_.epilogue, 'e');
    close();
    close();
    close_rows();
  }

  const Kernel& k_;
  const std::string& symbol_;
  const Dialect& d_;
  Helpers& helpers_;
  std::vector<int64_t>* params_;
  bool literal_params_ = false;
  std::map<const std::vector<Instr>*, std::vector<bool>> variant_;
  size_t last_;
  ThreadMapping mapping_;
  int lane_ = -1;                                         // vector lane being written, -1 outside vector steps
  std::map<const Instr*, std::string> vector_loads_;      // loads of whole vectors, by the variable holding them
  std::map<const Instr*, std::string> element_loads_;     // loads made ahead, by the array element holding them
  std::vector<bool> vector_stores_;                       // per body store: written as whole vectors
  std::vector<bool> streamed_;  // per body store: written through a block buffer and stream_store_fn
  int64_t block_ = 0;           // elements per streamed block; 0: the kernel writes directly
  std::string out_;
  int indent_ = 0;
  int tree_level_ = 0;  // names of combine_lanes_in_tree's local index, one per use
  int walk_ = 0;        // the walk whose reductions accumulate() and the combines take (0: the body's)
};

}  // namespace tessera::codegen::detail
