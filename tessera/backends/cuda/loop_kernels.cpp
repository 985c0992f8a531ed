#include "tessera/backends/cuda/loop_kernels.h"

#include <algorithm>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/codegen/dialect.h"
#include "tessera/codegen/emitter.h"
#include "tessera/codegen/thread_mapping.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

namespace {

// The CUDA dialect with bodies as inlined device functions: the __global__ entry points are the
// wrappers written below.
const codegen::Dialect& body_dialect() {
  static const codegen::Dialect d = [] {
    codegen::Dialect b = codegen::cuda_dialect();
    b.kernel_qualifier = "static __device__ __forceinline__";
    b.restrict_qualifier = "";  // an output may be written over an input read at the same index
    return b;
  }();
  return d;
}

std::string body_symbol(size_t i) { return fmt::format("tsr_body_{}", i); }
std::string entry_symbol(size_t i) { return fmt::format("tsr_kernel_{}", i); }

// The entry point's first parameter is a struct of two pointer arrays sized for the kernel (at least
// one element each); the host passes the same bytes as one pointer array.
int slots(int n) { return std::max(n, 1); }

}  // namespace

std::string loop_kernels_source(const std::vector<lower::Kernel>& kernels) {
  std::vector<std::string> symbols;
  for (size_t i = 0; i < kernels.size(); ++i) {
    TESSERA_CHECK(kernels[i].input_types.size() <= kMaxKernelBuffers && kernels[i].output_types.size() <= kMaxKernelBuffers,
                  "cuda: kernel {} has more than {} buffers", kernels[i].name, kMaxKernelBuffers);
    symbols.push_back(body_symbol(i));
  }
  std::string src = codegen::emit_module(kernels, symbols, body_dialect());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int ni = slots(static_cast<int>(kernels[i].input_types.size()));
    const int no = slots(static_cast<int>(kernels[i].output_types.size()));
    src += fmt::format(
        "\nstruct tsr_args_{0} {{ const void* in[{1}]; void* out[{2}]; }};\n"
        "extern \"C\" __global__ void {3}(const tsr_args_{0} a, int64_t begin, int64_t end) {{\n"
        "  {4}(a.in, a.out, begin, end);\n}}\n",
        i, ni, no, entry_symbol(i), symbols[i]);
  }
  return src;
}

LoopKernel::LoopKernel(std::shared_ptr<KernelModule> module, cudaKernel_t kernel, std::string name, int inputs,
                       int outputs, int64_t range, codegen::ThreadMapping mapping, int multiprocessors)
    : module_(std::move(module)), kernel_(kernel), name_(std::move(name)), inputs_(inputs), outputs_(outputs),
      range_(range), mapping_(mapping) {
  block_ = static_cast<unsigned>(body_dialect().block_size);
  // Enough blocks for every thread the mapping asks for (range units times the threads per output,
  // over the elements per vector step), at most 16 per multiprocessor: the grid-stride loops cover
  // the rest. Measured on an H200, one unit per thread over 256M elements ran at 46% of the copy
  // bandwidth, 16 blocks per multiprocessor at 71% (before 16-byte vectors).
  const int64_t threads = (range + mapping.vector - 1) / mapping.vector * mapping.group;
  const int64_t blocks = (threads + block_ - 1) / block_;
  grid_ = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t{16} * std::max(1, multiprocessors)));
}

void LoopKernel::launch(const void* const* in, void* const* out, cudaStream_t stream) const {
  if (range_ == 0) return;
  const void* args[2 * kMaxKernelBuffers] = {};
  std::copy(in, in + inputs_, args);
  std::copy(out, out + outputs_, args + slots(inputs_));
  int64_t begin = 0, end = range_;
  void* params[] = {args, &begin, &end};
  check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(grid_), dim3(block_), params, 0, stream),
        "cudaLaunchKernel (generated kernel)");
}

std::vector<std::shared_ptr<const LoopKernel>> compile_loop_kernels(const std::vector<lower::Kernel>& kernels,
                                                                    NvrtcCompiler& compiler, int multiprocessors) {
  std::vector<std::shared_ptr<const LoopKernel>> out;
  if (kernels.empty()) return out;
  std::shared_ptr<KernelModule> module = compiler.module(loop_kernels_source(kernels), "generated kernels");
  for (size_t i = 0; i < kernels.size(); ++i) {
    out.push_back(std::make_shared<LoopKernel>(module, module->kernel(entry_symbol(i)), kernels[i].name,
                                               static_cast<int>(kernels[i].input_types.size()),
                                               static_cast<int>(kernels[i].output_types.size()), kernels[i].range(),
                                               codegen::thread_mapping(kernels[i], body_dialect()), multiprocessors));
  }
  return out;
}

}  // namespace tessera::backends::cuda
