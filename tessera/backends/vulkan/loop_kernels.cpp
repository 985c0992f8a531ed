#include "tessera/backends/vulkan/loop_kernels.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/codegen/dialect.h"
#include "tessera/codegen/emitter.h"
#include "tessera/codegen/thread_mapping.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

// The GLSL table with the shifts in its push constants (tsr_shift[k] for binding k); `cooperative`
// false: every reduction output is one invocation's.
codegen::Dialect make_shader_dialect(bool cooperative) {
  codegen::Dialect g = codegen::glsl_dialect();
  g.kernel_signature = [](const codegen::Dialect& d, const std::string& symbol) {
    return fmt::format(
        "// {}: the module's entry point\n"
        "layout(local_size_x = {}) in;\n"
        "layout(push_constant) uniform TsrRange {{ int begin; int end; int tsr_shift[{}]; }};\n"
        "void main()",
        symbol, d.block_size, kMaxShaderBuffers);
  };
  if (!cooperative) g.warp_size = 0;
  return g;
}

// Reductions with few outputs over long rows spread each output over a workgroup (or a group of its
// invocations) meeting in shared memory, unless TESSERA_VULKAN_BLOCK_REDUCE=0 (for measuring both).
const codegen::Dialect& shader_dialect() {
  static const codegen::Dialect cooperative = make_shader_dialect(true), alone = make_shader_dialect(false);
  const char* env = std::getenv("TESSERA_VULKAN_BLOCK_REDUCE");
  return env != nullptr && std::strcmp(env, "0") == 0 ? alone : cooperative;
}

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Rewrites every element access `name[i]` of buffer `name` as `name[tsr_shift[k] + i]` (its
// declaration `name[]` is left alone).
std::string shift_accesses(const std::string& src, const std::string& name, int k) {
  std::string out;
  out.reserve(src.size() + 64);
  const std::string open = name + "[";
  size_t at = 0;
  for (;;) {
    const size_t hit = src.find(open, at);
    if (hit == std::string::npos) break;
    const size_t after = hit + open.size();
    const bool word = hit == 0 || !identifier_char(src[hit - 1]);
    out.append(src, at, after - at);
    if (word && after < src.size() && src[after] != ']') out += fmt::format("tsr_shift[{}] + ", k);
    at = after;
  }
  out.append(src, at, std::string::npos);
  return out;
}

}  // namespace

int loop_kernel_threads_per_unit(const lower::Kernel& kernel) {
  const codegen::ThreadMapping m = codegen::thread_mapping(kernel, shader_dialect());
  return m.group * m.split;
}

std::string loop_kernel_glsl(const lower::Kernel& kernel) {
  const size_t ni = kernel.input_types.size(), no = kernel.output_types.size();
  TESSERA_CHECK(static_cast<int>(ni + no) <= kMaxShaderBuffers,
                "vulkan: kernel {} has {} buffers, more than the {} a shader's push constants can describe",
                kernel.name, ni + no, kMaxShaderBuffers);
  std::string src = codegen::emit_kernel(kernel, "main", shader_dialect());
  for (size_t i = 0; i < ni; ++i) src = shift_accesses(src, fmt::format("in{}", i), static_cast<int>(i));
  for (size_t i = 0; i < no; ++i) src = shift_accesses(src, fmt::format("out{}", i), static_cast<int>(ni + i));
  return src;
}

}  // namespace tessera::backends::vulkan
