// The kernel writer's core (kernel_writer.h): the kernel's frame, index arithmetic, instructions as
// expressions, stores and streaming; the loop shapes are in kernel_writer_elementwise.cpp and
// kernel_writer_reduction.cpp, the row phase in row_phase.cpp.
#include "tessera/codegen/kernel_writer.h"

namespace tessera::codegen::detail {

std::string KernelWriter::write() {
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

void KernelWriter::check_index_range() const {
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
    for (const Instr& in : *code) ok = ok && (!lower::has_access(in.op) || fits(in.access));
  }
  for (const auto* list : {&k_.body_stores, &k_.epilogue_stores, &k_.row_stores}) {
    for (const lower::Store& st : *list) ok = ok && fits(st.access);
  }
  TESSERA_CHECK(ok, "emitter: kernel '{}' has offsets beyond the {}-bit indices of dialect {}", k_.name,
                d_.index_bits, d_.name);
}

void KernelWriter::note_types() {
  for (const auto* list : {&k_.input_types, &k_.output_types}) {
    for (ScalarType t : *list) helpers_.types.insert(t == ScalarType::boolean ? ScalarType::u8 : t);
  }
  for (const auto* code : all_code()) {
    for (const Instr& in : *code) helpers_.types.insert(in.type);
  }
  for (const auto& r : k_.reductions) helpers_.types.insert(r.acc_type);
}

std::vector<const std::vector<Instr>*> KernelWriter::all_code() const {
  std::vector<const std::vector<Instr>*> code = {&k_.body, &k_.epilogue, &k_.row};
  for (const auto& walk : k_.chained) code.push_back(&walk);
  return code;
}

std::string KernelWriter::num(int64_t v) {
  if (!params_) return fmt::format("{}", v);
  params_->push_back(v);
  return fmt::format("p{}", params_->size() - 1);
}

std::string KernelWriter::index(const Affine& a) {
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

void KernelWriter::decompose(const std::string& src, const std::vector<size_t>& dims) {
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

std::string KernelWriter::ref(const std::vector<Instr>& code, char prefix, int id) const {
  const Instr& in = code.at(static_cast<size_t>(id));
  if (in.op == Op::Literal) return format_literal(in.type, in.fval, in.ival, d_);
  return value_name(code, prefix, static_cast<size_t>(id));
}

std::string KernelWriter::value_name(const std::vector<Instr>& code, char prefix, size_t id) const {
  if (lane_ >= 0) {
    auto it = variant_.find(&code);
    if (it != variant_.end() && it->second.size() == code.size() && it->second[id]) {
      return fmt::format("{}{}_{}", prefix, id, lane_);
    }
  }
  return fmt::format("{}{}", prefix, id);
}

std::string KernelWriter::expr(const std::vector<Instr>& code, char prefix, const Instr& in) {
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
    case Op::Index:
      return cast_to(t, "(" + index(in.access) + ")", d_);
  }
  fail("emitter: unknown instruction");
}

const std::vector<bool>& KernelWriter::variant(const std::vector<Instr>& code) {
  auto& v = variant_[&code];
  if (v.size() == code.size()) return v;
  v.assign(code.size(), false);
  for (size_t i = 0; i < code.size(); ++i) {
    const Instr& in = code[i];
    bool var = (lower::has_access(in.op) && in.access.coef[last_] != 0) || (in.op == Op::Reduced && tiled());
    for (int a : in.args) var = var || (a >= 0 && v[static_cast<size_t>(a)]);
    v[i] = var;
  }
  return v;
}

void KernelWriter::instrs(const std::vector<Instr>& code, char prefix, Part part) {
  const std::vector<bool>& var = variant(code);
  for (size_t i = 0; i < code.size(); ++i) {
    const Instr& in = code[i];
    if (in.op == Op::Literal) continue;
    if ((part == Part::Invariant && var[i]) || (part == Part::Variant && !var[i])) continue;
    line(fmt::format("const {} {} = {};", d_.type(in.type), value_name(code, prefix, i), expr(code, prefix, in)));
  }
}

void KernelWriter::open_inner_loop(const std::vector<Instr>& code, char prefix, const std::string& lo,
                                   const std::string& hi) {
  instrs(code, prefix, Part::Invariant);
  pragma(d_.inner_loop_pragma);
  open(fmt::format("for ({} j = {}; j < {}; ++j)", idx(), lo, hi));
  instrs(code, prefix, Part::Variant);
}

std::string KernelWriter::stored(const std::vector<Instr>& code, char prefix, const lower::Store& s) const {
  const std::string v = ref(code, prefix, s.value);
  const bool bytes = k_.output_types[static_cast<size_t>(s.output)] == ScalarType::boolean &&
                     d_.bool_buffer_type != d_.type(ScalarType::boolean);
  return d_.strict_types && bytes ? cast_to(d_.bool_buffer_type, v, d_) : v;
}

void KernelWriter::stores(const std::vector<lower::Store>& list, const std::vector<Instr>& code, char prefix) {
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

void KernelWriter::plan_streaming() {
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

void KernelWriter::streamed_inner_loop(const std::string& lo, const std::string& hi) {
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

std::vector<size_t> KernelWriter::dims_where(bool reduced) const {
  std::vector<size_t> dims;
  for (size_t d = 0; d < k_.domain.size(); ++d) {
    if (k_.reduced[d] == reduced) dims.push_back(d);
  }
  return dims;
}

std::string KernelWriter::range_loop(const std::string& v) const {
  if (d_.schedule == Schedule::RowLoops) return fmt::format("for ({1} {0} = begin; {0} < end; ++{0})", v, idx());
  return fmt::format("for ({3} {0} = begin + {1}; {0} < end; {0} += {2})", v, d_.thread_index, d_.thread_count,
                     idx());
}

}  // namespace tessera::codegen::detail
