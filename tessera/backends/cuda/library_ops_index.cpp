// gather and scatter_add on the CUDA backend: kernels generated per node with its shapes and strides
// written in (NVRTC compiles each distinct one once; the disk cache keeps them). Indices outside
// their axis are never followed: the element becomes 0 and the run's index-error flag is raised,
// which the executable reports at its next run.
#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/launch.h"
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
    grid_ = grid_stride_blocks(threads, multiprocessors);
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
    launch_kernel(reinterpret_cast<const void*>(kernel_), dim3(grid_), dim3(256), params, 0, stream_of(ctx), "cudaLaunchKernel (index kernel)");
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
      "  TSR_GRID_PROLOGUE();\n"
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
      "  TSR_GRID_PROLOGUE();\n"
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

// A tensor seen along an op's "axis" attribute: `outer` blocks of `size` slabs of `slice_bytes` each.
struct SlabGeometry {
  int64_t outer = 1, size = 0, slice_bytes = 0;
};

SlabGeometry slabs_along_axis(const ir::Node& node) {
  const ir::Value& x = node.input(0);
  const auto axis = static_cast<size_t>(normalize_axis(node.attrs().get_int("axis"), x.rank(), node.op_name().c_str()));
  SlabGeometry g;
  g.size = x.shape()[axis];
  g.slice_bytes = static_cast<int64_t>(dtype_size(x.dtype()));
  for (size_t d = 0; d < axis; ++d) g.outer *= x.shape()[d];
  for (size_t d = axis + 1; d < x.shape().size(); ++d) g.slice_bytes *= x.shape()[d];
  return g;
}

// The widest move unit (16, 8, 4, 2 or 1 bytes) that divides the slice and every operand's offset.
int64_t move_unit(int64_t slice_bytes, std::initializer_list<int64_t> offsets) {
  int64_t unit = 16;
  const auto fits = [&](int64_t u) {
    if (slice_bytes % u != 0) return false;
    for (int64_t o : offsets) {
      if (o % u != 0) return false;
    }
    return true;
  };
  while (unit > 1 && !fits(unit)) unit /= 2;
  return unit;
}

std::string unit_type(int64_t unit) { return unit == 16 ? "uint4" : unsigned_of_size(static_cast<size_t>(unit)); }

// index_copy: x copied to the result unless they share memory (a KV cache updated in place), then the
// m slices of src written at their indices, moved in the widest unit that divides the slice and the
// addresses; with CONVERT (the `convert` attribute) element by element, each widened to float and
// rounded to x's type. A repeated or out-of-range index raises the error flag (an out-of-range slice
// is skipped).
constexpr const char* kIndexCopySource = R"CUDA(
#if CONVERT
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void narrow(float v, float* to) { *to = v; }
__device__ __forceinline__ void narrow(float v, __half* to) { *to = __float2half_rn(v); }
__device__ __forceinline__ void narrow(float v, __nv_bfloat16* to) { *to = __float2bfloat16_rn(v); }
#define MOVE(to, from) narrow(widen(from), to)
#else
#define SRC_T UNIT
#define DST_T UNIT
#define MOVE(to, from) (*(to) = (from))
#endif
extern "C" __global__ void tsr_index_copy(const SRC_T* __restrict__ src, const POS_T* __restrict__ idx, DST_T* out,
    int* error, long long outer, long long size, long long m, long long slice) {
  TSR_GRID_PROLOGUE();
  const long long total = outer * m * slice, step = (long long)gridDim.x * blockDim.x;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const long long e = t % slice, rest = t / slice, i = rest % m, o = rest / m;
    const long long r = (long long)idx[i];
    if (r < 0 || r >= size) { *error = 1; continue; }
    // The slice's units share the search for an earlier equal index (unit e compares indices e, e +
    // slice, ...): one thread scanning all of them made a 2,048-row prefill's cache write O(m^2) long.
    if (o == 0) {
      for (long long j = e; j < i; j += slice) if ((long long)idx[j] == r) *error = 1;
    }
    MOVE(out + (o * size + r) * slice + e, src[(o * m + i) * slice + e]);
  }
}
)CUDA";

const char* float_type(DType dt) {
  switch (dt) {
    case DType::f32:
      return "float";
    case DType::f16:
      return "__half";
    case DType::bf16:
      return "__nv_bfloat16";
    default:
      return nullptr;
  }
}

class IndexCopyStep final : public common::Step {
 public:
  IndexCopyStep(std::shared_ptr<KernelModule> module, Operand x, Operand idx, Operand src, Operand out, int64_t outer,
                int64_t size, int64_t m, int64_t slice_units, int64_t unit, int multiprocessors)
      : module_(std::move(module)),
        kernel_(module_->kernel("tsr_index_copy")),
        x_(x),
        idx_(idx),
        src_(src),
        out_(out),
        outer_(outer),
        size_(size),
        m_(m),
        slice_(slice_units),
        unit_(unit) {
    grid_ = grid_stride_blocks(outer * m * slice_units, multiprocessors);
  }
  void run(const common::RunContext& ctx) const override {
    const cudaStream_t stream = stream_of(ctx);
    const std::byte* x = ctx.ptr<const std::byte>(x_);
    void* out = ctx.ptr<std::byte>(out_);
    if (out != x) {
      check(cudaMemcpyAsync(out, x, static_cast<size_t>(outer_ * size_ * slice_ * unit_), cudaMemcpyDeviceToDevice,
                            stream),
            "cudaMemcpyAsync (index_copy)");
    }
    if (outer_ * m_ * slice_ == 0) return;
    const void* src = ctx.ptr<const std::byte>(src_);
    const void* idx = ctx.ptr<const std::byte>(idx_);
    void* flag = index_error_flag(ctx);
    long long outer = outer_, size = size_, m = m_, slice = slice_;
    void* params[] = {&src, &idx, &out, &flag, &outer, &size, &m, &slice};
    launch_kernel(reinterpret_cast<const void*>(kernel_), dim3(grid_), dim3(256), params, 0, stream, "cudaLaunchKernel (index_copy)");
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override {
    return fmt::format("cuda index_copy {} slices of {} bytes into {} x {}", m_, slice_ * unit_, outer_, size_);
  }

 private:
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_;
  Operand x_, idx_, src_, out_;
  int64_t outer_, size_, m_, slice_, unit_;
  unsigned grid_ = 1;
};

bool claim_index_copy(const ir::Node& n) {
  if (n.inputs().size() != 3 || n.num_outputs() != 1 || n.input(0).rank() < 1 || !index_dtype_ok(n)) return false;
  const DType x = n.input(0).dtype(), src = n.input(2).dtype();
  return x == src || index_copy_converts(src, x);
}

bool lower_index_copy(Lowering& L, const ir::NodePtr& node) {
  if (!claim_index_copy(*node)) return false;
  const int32_t x = L.packed(L.value(node->input(0))), idx = L.packed(L.value(node->input(1)));
  const int32_t src = L.packed(L.value(node->input(2)));
  const int32_t out = L.produce(ir::Value(node, 0));
  L.allow_in_place(out, x, {x, idx, src});
  const SlabGeometry g = slabs_along_axis(*node);
  const DType x_type = node->input(0).dtype(), src_type = node->input(2).dtype();
  // Slices move in the widest unit that divides them, or element by element when converted.
  const int64_t unit = x_type != src_type ? static_cast<int64_t>(dtype_size(x_type))
                                          : move_unit(g.slice_bytes, {L.operand(src).byte_offset, L.operand(out).byte_offset});
  const std::string src_text =
      (x_type != src_type ? fmt::format("#define CONVERT 1\n#define SRC_T {}\n#define DST_T {}\n", float_type(src_type),
                                        float_type(x_type))
                          : fmt::format("#define CONVERT 0\n#define UNIT {}\n", unit_type(unit))) +
      fmt::format("#define POS_T {}\n", index_type(*node)) + kIndexCopySource;
  Context& ctx = lowering_context();
  L.emit(std::make_unique<IndexCopyStep>(ctx.compiler().module(src_text, "index_copy kernel"), L.operand(x),
                                         L.operand(idx), L.operand(src), L.operand(out), g.outer, g.size,
                                         node->input(1).shape()[0], g.slice_bytes / unit, unit, ctx.multiprocessors()),
         {x, idx, src}, {out});
  return true;
}

// index_select: out[o, i, :] = x[o, idx[i], :], whole slices moved in the widest unit that divides them
// (an embedding lookup reads the table's rows where they lie). An out-of-range index raises the error
// flag and gives a zero slice.
constexpr const char* kIndexSelectSource = R"CUDA(
typedef UNIT unit_t;  // a functional cast needs a one-word name, and UNIT may be "unsigned short"
extern "C" __global__ void tsr_index_select(const UNIT* __restrict__ x, const POS_T* __restrict__ idx,
    UNIT* __restrict__ out, int* error, long long outer, long long size, long long m, long long slice) {
  TSR_GRID_PROLOGUE();
  const long long total = outer * m * slice, step = (long long)gridDim.x * blockDim.x;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const long long e = t % slice, rest = t / slice, i = rest % m, o = rest / m;
    const long long r = (long long)idx[i];
    if (r < 0 || r >= size) { *error = 1; out[t] = unit_t(); continue; }
    out[t] = x[(o * size + r) * slice + e];
  }
}
)CUDA";

class SliceKernelStep final : public common::Step {
 public:
  SliceKernelStep(std::shared_ptr<KernelModule> module, const char* name, std::vector<Operand> operands,
                  std::array<long long, 4> sizes, int multiprocessors, std::string what)
      : module_(std::move(module)), kernel_(module_->kernel(name)), operands_(std::move(operands)), sizes_(sizes),
        what_(std::move(what)) {
    grid_ = grid_stride_blocks(sizes[0] * sizes[2] * sizes[3], multiprocessors);
  }
  void run(const common::RunContext& ctx) const override {
    if (sizes_[0] * sizes_[2] * sizes_[3] == 0) return;
    void* ptrs[3];
    for (size_t i = 0; i < 3; ++i) ptrs[i] = ctx.ptr<std::byte>(operands_[i]);
    void* flag = index_error_flag(ctx);
    std::array<long long, 4> sizes = sizes_;
    void* params[] = {&ptrs[0], &ptrs[1], &ptrs[2], &flag, &sizes[0], &sizes[1], &sizes[2], &sizes[3]};
    launch_kernel(reinterpret_cast<const void*>(kernel_), dim3(grid_), dim3(256), params, 0, stream_of(ctx), "cudaLaunchKernel (index_select)");
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return "cuda " + what_; }

 private:
  std::shared_ptr<KernelModule> module_;
  cudaKernel_t kernel_;
  std::vector<Operand> operands_;
  std::array<long long, 4> sizes_;  // outer, axis size, index count, slice units
  unsigned grid_ = 1;
  std::string what_;
};

bool claim_index_select(const ir::Node& n) {
  return n.inputs().size() == 2 && n.num_outputs() == 1 && n.input(0).rank() >= 1 && index_dtype_ok(n);
}

bool lower_index_select(Lowering& L, const ir::NodePtr& node) {
  if (!claim_index_select(*node)) return false;
  const int32_t x = L.packed(L.value(node->input(0))), idx = L.packed(L.value(node->input(1)));
  const int32_t out = L.produce(ir::Value(node, 0));
  const SlabGeometry g = slabs_along_axis(*node);
  const int64_t unit = move_unit(g.slice_bytes, {L.operand(x).byte_offset, L.operand(out).byte_offset});
  const std::string src =
      fmt::format("#define UNIT {}\n#define POS_T {}\n", unit_type(unit), index_type(*node)) + kIndexSelectSource;
  Context& ctx = lowering_context();
  const int64_t m = node->input(1).shape()[0];
  L.emit(std::make_unique<SliceKernelStep>(ctx.compiler().module(src, "index_select kernel"), "tsr_index_select",
                                           std::vector<Operand>{L.operand(x), L.operand(idx), L.operand(out)},
                                           std::array<long long, 4>{g.outer, g.size, m, g.slice_bytes / unit},
                                           ctx.multiprocessors(),
                                           fmt::format("index_select {} slices of {} bytes", m, g.slice_bytes)),
         {x, idx}, {out});
  return true;
}

}  // namespace

bool index_copy_converts(DType from, DType to) { return float_type(from) != nullptr && float_type(to) != nullptr; }

bool cuda_index_op_supported(const ir::Node& n) {
  if (n.num_outputs() != 1 || n.inputs().empty() || n.input(0).rank() == 0 || !index_dtype_ok(n)) return false;
  if (n.op_name() == "gather") return n.inputs().size() == 2;
  if (n.op_name() == "scatter_add") return n.inputs().size() == 3 && arithmetic_type(n.input(0).dtype()) != nullptr;
  return false;
}

void register_index_lowerings(common::LoweringTable& table) {
  table["gather"] = {lower_gather, claim_gather, true};
  table["scatter_add"] = {lower_scatter_add, claim_gather, true};
  table["index_copy"] = {lower_index_copy, claim_index_copy, true};
  table["index_select"] = {lower_index_select, claim_index_select, true};
}

}  // namespace tessera::backends::cuda
