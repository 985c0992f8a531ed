// gather and scatter_add on the CUDA backend: kernels generated per node with its shapes and strides
// written in (NVRTC compiles each distinct one once; the disk cache keeps them). Indices outside
// their axis are never followed: the element becomes 0 and the run's index-error flag is raised,
// which the executable reports at its next run.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/steps.h"

namespace tessera::backends::cuda {

namespace {

using common::Layout;
using common::Lowering;
using common::Operand;

const char* unsigned_of_size(size_t bytes) {
  switch (bytes) {
    case 1:
      return "unsigned char";
    case 2:
      return "unsigned short";
    case 4:
      return "unsigned int";
    default:
      return "unsigned long long";
  }
}

const char* arithmetic_type(DType dt) {
  switch (dt) {
    case DType::f32:
      return "float";
    case DType::f64:
      return "double";
    case DType::i32:
      return "int";
    case DType::i64:
      return "long long";
    default:
      return nullptr;
  }
}

// Code that turns the linear index `o` over `shape` into element offsets of several layouts:
// `names[k]` += coordinate * strides[k][d] for every axis except those `skip[k]` names.
std::string offsets_code(const Shape& shape, const std::vector<std::string>& names,
                         const std::vector<const Strides*>& strides, const std::vector<int64_t>& skip) {
  std::string code = "    long long rest = o;\n";
  for (size_t d = shape.size(); d-- > 0;) {
    code += fmt::format("    {{ const long long c = rest % {0}LL; rest /= {0}LL;", std::max<int64_t>(shape[d], 1));
    for (size_t k = 0; k < names.size(); ++k) {
      if (skip[k] == static_cast<int64_t>(d)) continue;
      code += fmt::format(" {} += c * {}LL;", names[k], (*strides[k])[d]);
    }
    code += " }\n";
  }
  return code;
}

class GeneratedStep final : public common::Step {
 public:
  GeneratedStep(std::shared_ptr<KernelModule> module, cudaKernel_t kernel, std::vector<Operand> operands,
                int64_t threads, int multiprocessors, std::string what)
      : module_(std::move(module)), kernel_(kernel), operands_(std::move(operands)), what_(std::move(what)) {
    const int64_t blocks = (threads + 255) / 256;
    grid_ = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t{16} * std::max(1, multiprocessors)));
    empty_ = threads == 0;
  }
  void run(const common::RunContext& ctx) const override {
    if (empty_) return;
    void* ptrs[8];
    void* params[8];
    for (size_t i = 0; i < operands_.size(); ++i) {
      ptrs[i] = ctx.ptr<std::byte>(operands_[i]);
      params[i] = &ptrs[i];
    }
    void* flag = index_error_flag(ctx);
    params[operands_.size()] = &flag;
    check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(grid_), dim3(256), params, 0, stream_of(ctx)),
          "cudaLaunchKernel (index kernel)");
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return "cuda " + what_; }

 private:
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_;
  std::vector<Operand> operands_;
  unsigned grid_ = 1;
  bool empty_ = false;
  std::string what_;
};

bool index_dtype_ok(const ir::Node& n) { return n.input(1).dtype() == DType::i32 || n.input(1).dtype() == DType::i64; }

const char* index_type(const ir::Node& n) { return n.input(1).dtype() == DType::i32 ? "int" : "long long"; }

bool claim_gather(const ir::Node& n) { return cuda_index_op_supported(n); }

bool lower_gather(Lowering& L, const ir::NodePtr& node) {
  if (!cuda_index_op_supported(*node)) return false;
  const int32_t x = L.value(node->input(0)), idx = L.value(node->input(1));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const Layout& lx = L.info(x).layout;
  const Layout& li = L.info(idx).layout;
  const auto axis = static_cast<int64_t>(normalize_axis(node->attrs().get_int("axis"), node->input(0).rank(), "gather"));
  const Shape& shape = out.shape();
  const std::string t = unsigned_of_size(dtype_size(out.dtype()));
  std::string src = fmt::format(
      "extern \"C\" __global__ void tsr_gather(const {0}* x, const {1}* idx, {0}* out, int* error) {{\n"
      "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      "  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < {2}LL; o += step) {{\n"
      "    long long xo = {3}LL, io = {4}LL;\n",
      t, index_type(*node), out.type().numel(), lx.offset, li.offset);
  src += offsets_code(shape, {"xo", "io"}, {&lx.strides, &li.strides}, {axis, -1});
  src += fmt::format(
      "    const long long i = (long long)idx[io];\n"
      "    if (i < 0 || i >= {0}LL) {{ *error = 1; out[o] = 0; continue; }}\n"
      "    out[o] = x[xo + i * {1}LL];\n  }}\n}}\n",
      lx.shape[static_cast<size_t>(axis)], lx.strides[static_cast<size_t>(axis)]);
  Context& ctx = lowering_context();
  auto module = ctx.compiler().module(src, "gather kernel");
  // Operands point at the buffers' starts: the layouts' offsets are in the code.
  L.emit(std::make_unique<GeneratedStep>(module, module->kernel("tsr_gather"),
                                         std::vector<Operand>{{L.info(x).buffer, 0}, {L.info(idx).buffer, 0},
                                                              L.operand(y)},
                                         out.type().numel(), ctx.multiprocessors(),
                                         fmt::format("gather {}", ir::type_str(out.type()))),
         {x, idx}, {y});
  return true;
}

// One thread per output element sums, in order and in double (int64 for integers), the sources whose
// index names it: the same sum as the reference's, deterministic, no atomics.
bool lower_scatter_add(Lowering& L, const ir::NodePtr& node) {
  if (!cuda_index_op_supported(*node)) return false;
  const int32_t x = L.value(node->input(0)), idx = L.value(node->input(1)), s = L.value(node->input(2));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const Layout& lx = L.info(x).layout;
  const Layout& li = L.info(idx).layout;
  const Layout& ls = L.info(s).layout;
  const auto axis =
      static_cast<int64_t>(normalize_axis(node->attrs().get_int("axis"), node->input(0).rank(), "scatter_add"));
  const Shape& shape = out.shape();
  const Shape& ishape = node->input(1).shape();
  const DType dt = out.dtype();
  const std::string t = arithmetic_type(dt);
  const std::string acc = is_floating(dt) ? "double" : "long long";
  const auto a = static_cast<size_t>(axis);
  // Output (line, i): the index positions sharing its coordinates off the axis, j = 0..ishape[axis).
  std::string src = fmt::format(
      "extern \"C\" __global__ void tsr_scatter_add(const {0}* x, const {1}* idx, const {0}* s, {0}* out, int* error) "
      "{{\n"
      "  const long long step = (long long)gridDim.x * blockDim.x;\n"
      "  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < {2}LL; o += step) {{\n"
      "    long long xo = {3}LL, io = {4}LL, so = {5}LL, line_inside = 1, target = 0;\n",
      t, index_type(*node), out.type().numel(), lx.offset, li.offset, ls.offset);
  // Walk the output's coordinates; off the axis they must lie inside the index's extent.
  src += "    long long rest = o;\n";
  for (size_t d = shape.size(); d-- > 0;) {
    src += fmt::format("    {{ const long long c = rest % {0}LL; rest /= {0}LL; xo += c * {1}LL;",
                       std::max<int64_t>(shape[d], 1), lx.strides[d]);
    if (d == a) {
      src += " target = c;";
    } else {
      src += fmt::format(" if (c >= {}LL) line_inside = 0; io += c * {}LL; so += c * {}LL;", ishape[d], li.strides[d],
                         ls.strides[d]);
    }
    src += " }\n";
  }
  src += fmt::format(
      "    {0} sum = ({0})x[xo];\n"
      "    if (line_inside) {{\n"
      "      for (long long j = 0; j < {1}LL; ++j) {{\n"
      "        const long long i = (long long)idx[io + j * {2}LL];\n"
      "        if (i < 0 || i >= {3}LL) {{ *error = 1; continue; }}\n"
      "        if (i == target) sum += ({0})s[so + j * {4}LL];\n"
      "      }}\n"
      "    }}\n"
      "    out[o] = ({5})sum;\n  }}\n}}\n",
      acc, ishape[a], li.strides[a], shape[a], ls.strides[a], t);
  Context& ctx = lowering_context();
  auto module = ctx.compiler().module(src, "scatter_add kernel");
  L.emit(std::make_unique<GeneratedStep>(
             module, module->kernel("tsr_scatter_add"),
             std::vector<Operand>{{L.info(x).buffer, 0}, {L.info(idx).buffer, 0}, {L.info(s).buffer, 0}, L.operand(y)},
             out.type().numel(), ctx.multiprocessors(), fmt::format("scatter_add {}", ir::type_str(out.type()))),
         {x, idx, s}, {y});
  return true;
}

}  // namespace

bool cuda_index_op_supported(const ir::Node& n) {
  if (n.num_outputs() != 1 || n.inputs().empty() || n.input(0).rank() == 0 || !index_dtype_ok(n)) return false;
  if (n.op_name() == "gather") return n.inputs().size() == 2;
  if (n.op_name() == "scatter_add") return n.inputs().size() == 3 && arithmetic_type(n.input(0).dtype()) != nullptr;
  return false;
}

void register_index_lowerings(common::LoweringTable& table) {
  table["gather"] = {lower_gather, claim_gather, true};
  table["scatter_add"] = {lower_scatter_add, claim_gather, true};
}

}  // namespace tessera::backends::cuda
