#include "tessera/backends/cuda/loop_kernels.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/launch.h"
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

// A cap on blocks per multiprocessor (the grid-stride loops cover the rest); none by default:
// TESSERA_CUDA_BLOCKS_PER_SM sets one, for measuring launch shapes. On an H200, relu(a*x+b) over
// 256M floats with two 16-byte vectors per thread ran at 3,882 GB/s capped at 16 blocks per
// multiprocessor, 3,930 at 48 and 4,131 uncapped (the copy: 4,234).
int64_t blocks_per_multiprocessor() {
  const char* env = std::getenv("TESSERA_CUDA_BLOCKS_PER_SM");
  const int64_t v = env != nullptr ? std::atoll(env) : 0;
  return v > 0 ? v : int64_t{1} << 24;
}

}  // namespace

std::string loop_kernels_source(const std::vector<lower::Kernel>& kernels) {
  std::vector<std::string> symbols;
  for (size_t i = 0; i < kernels.size(); ++i) {
    TESSERA_CHECK(kernels[i].input_types.size() <= kMaxKernelBuffers && kernels[i].output_types.size() < kMaxKernelBuffers,
                  "cuda: kernel {} has more than {} buffers", kernels[i].name, kMaxKernelBuffers);
    symbols.push_back(body_symbol(i));
  }
  std::string src = codegen::emit_module(kernels, symbols, body_dialect());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int ni = slots(static_cast<int>(kernels[i].input_types.size()));
    const bool scratch = codegen::scratch_bytes(kernels[i], body_dialect()) > 0;  // one more slot after the outputs
    const int no = slots(static_cast<int>(kernels[i].output_types.size()) + (scratch ? 1 : 0));
    src += fmt::format(
        "\nstruct tsr_args_{0} {{ const void* in[{1}]; void* out[{2}]; }};\n"
        "extern \"C\" __global__ void {3}(const tsr_args_{0} a, int64_t begin, int64_t end) {{\n"
        "  TSR_GRID_PROLOGUE();\n"
        "  {4}(a.in, a.out, begin, end);\n}}\n",
        i, ni, no, entry_symbol(i), symbols[i]);
  }
  return src;
}

LoopKernel::LoopKernel(std::shared_ptr<KernelModule> module, cudaKernel_t kernel, std::string name, int inputs,
                       int outputs, int64_t range, codegen::ThreadMapping mapping, int64_t scratch_bytes,
                       int multiprocessors)
    : module_(std::move(module)), kernel_(kernel), name_(std::move(name)), inputs_(inputs), outputs_(outputs),
      range_(range), mapping_(mapping) {
  block_ = static_cast<unsigned>(body_dialect().block_size);
  if (scratch_bytes > 0) {
    // Partial results and zeroed counters of a split reduction; each run leaves the counters at zero.
    check(cudaMalloc(&scratch_, static_cast<size_t>(scratch_bytes)), "cudaMalloc (split reduction scratch)");
    check(cudaMemset(scratch_, 0, static_cast<size_t>(scratch_bytes)), "cudaMemset (split reduction scratch)");
  }
  // Enough blocks for every thread the mapping asks for: range units times the threads per output
  // and blocks per output, over the elements of one vector (the measured shape: uncapped, a thread
  // takes one vector and its unrolled second falls past the end).
  const int64_t per_thread = int64_t{mapping.vector} * mapping.unroll;
  const int64_t threads = (range + per_thread - 1) / per_thread * mapping.group * mapping.split;
  const int64_t blocks = (threads + block_ - 1) / block_;
  const int64_t cap = std::min<int64_t>(blocks_per_multiprocessor() * std::max(1, multiprocessors), INT32_MAX);
  grid_ = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, cap));
}

LoopKernel::~LoopKernel() {
  if (scratch_ != nullptr) cudaFree(scratch_);
}

void LoopKernel::launch(const void* const* in, void* const* out, cudaStream_t stream) const {
  if (range_ == 0) return;
  const void* args[2 * kMaxKernelBuffers] = {};
  std::copy(in, in + inputs_, args);
  std::copy(out, out + outputs_, args + slots(inputs_));
  if (scratch_ != nullptr) args[slots(inputs_) + outputs_] = scratch_;
  int64_t begin = 0, end = range_;
  void* params[] = {args, &begin, &end};
  launch_kernel(reinterpret_cast<const void*>(kernel_), dim3(grid_), dim3(block_), params, 0, stream, "cudaLaunchKernel (generated kernel)");
}

std::vector<std::shared_ptr<const LoopKernel>> compile_loop_kernels(const std::vector<lower::Kernel>& kernels,
                                                                    NvrtcCompiler& compiler, int multiprocessors) {
  std::vector<std::shared_ptr<const LoopKernel>> out;
  if (kernels.empty()) return out;
  const std::string source = loop_kernels_source(kernels);
  // As on the CPU backend (cpu/jit.cpp): the generated module on stderr, for reading what fusion made.
  const char* dump = std::getenv("TESSERA_DUMP_KERNELS");
  if (dump != nullptr && std::string(dump) == "1") std::fprintf(stderr, "// ---- tessera cuda kernels ----\n%s\n", source.c_str());
  std::shared_ptr<KernelModule> module = compiler.module(source, "generated kernels");
  for (size_t i = 0; i < kernels.size(); ++i) {
    out.push_back(std::make_shared<LoopKernel>(module, module->kernel(entry_symbol(i)), kernels[i].name,
                                               static_cast<int>(kernels[i].input_types.size()),
                                               static_cast<int>(kernels[i].output_types.size()), kernels[i].range(),
                                               codegen::thread_mapping(kernels[i], body_dialect()),
                                               codegen::scratch_bytes(kernels[i], body_dialect()), multiprocessors));
  }
  return out;
}

}  // namespace tessera::backends::cuda
