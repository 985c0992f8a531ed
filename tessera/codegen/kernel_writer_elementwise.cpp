// The kernel writer's elementwise loop shapes (kernel_writer.h): rows with a contiguous inner loop,
// grid-stride steps (unrolled or not) and whole-vector steps.
#include "tessera/codegen/kernel_writer.h"

namespace tessera::codegen::detail {

void KernelWriter::open_rows(const std::vector<size_t>& outer) {
  const std::string n = extent(last_);
  line(fmt::format("{} flat = begin;", idx()));
  open("while (flat < end)");
  line(fmt::format("const {} row = flat / {};", idx(), n));
  line(fmt::format("const {} j0 = flat - row * {};", idx(), n));
  line(fmt::format("const {1} j1 = end - flat < {0} - j0 ? j0 + (end - flat) : {0};", n, idx()));
  decompose("row", outer);
}

void KernelWriter::elementwise_rows() {
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
    open_inner_loop(k_.body, 'v', "begin", "end");
  } else {
    std::vector<size_t> outer;
    for (size_t d = 0; d < last_; ++d) outer.push_back(d);
    open_rows(outer);
    open_inner_loop(k_.body, 'v', "j0", "j1");
  }
  stores(k_.body_stores, k_.body, 'v');
  close();
  if (k_.domain.size() > 1) close_rows();
}

void KernelWriter::elementwise_grid() {
  if (mapping_.unroll > 1 && mapping_.vector == 1) return elementwise_grid_unrolled(mapping_.unroll);
  open(range_loop("u"));  // not "flat": a GLSL keyword
  std::vector<size_t> all;
  for (size_t d = 0; d < k_.domain.size(); ++d) all.push_back(d);
  decompose("u", all);
  instrs(k_.body, 'v');
  stores(k_.body_stores, k_.body, 'v');
  close();
}

void KernelWriter::elementwise_grid_unrolled(int unroll) {
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

void KernelWriter::elementwise_vectors() {
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

}  // namespace tessera::codegen::detail
