// Golden files of representative kernels in every dialect (tests/codegen/golden/<kernel>.<c|cu|comp>),
// TESSERA_UPDATE_GOLDEN=1 rewrites them. The CUDA text is compiled with NVRTC for sm_90 where the
// test binary links it (no GPU needed), the GLSL with glslangValidator or glslc when installed.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen_test_util.h"
#include "tessera/codegen/emitter.h"
#include "tessera/ops/nn.h"

#if defined(TESSERA_HAVE_NVRTC)
#include <nvrtc.h>
#endif

using namespace tessera;
using namespace tessera::test;

namespace {

struct GoldenKernel {
  std::string name;
  MultiFn fn;
  std::vector<ir::TensorType> types;
};

std::vector<GoldenKernel> golden_kernels() {
  using V = std::vector<Tensor>;
  return {
      {"relu_axpb",
       [](const V& in) { return V{ops::relu(in[0] * 2.0 + in[1])}; },
       {{DType::f32, {4, 8}}, {DType::f32, {8}}}},
      {"broadcast_add", [](const V& in) { return V{in[0] + in[1]}; }, {{DType::f32, {3, 1}}, {DType::f32, {1, 5}}}},
      {"row_sum_squares", [](const V& in) { return V{ops::sum(ops::square(in[0]), {1})}; }, {{DType::f32, {4, 8}}}},
      {"column_max", [](const V& in) { return V{ops::max(in[0], {0})}; }, {{DType::f32, {4, 8}}}},
      // Long enough rows that GPU dialects spread each output over lanes of a warp, or over a block.
      {"row_sum_lanes", [](const V& in) { return V{ops::sum(in[0] * in[0], {1})}; }, {{DType::f32, {64, 128}}}},
      {"total_max_block", [](const V& in) { return V{ops::max(in[0], {0}) + 1.0}; }, {{DType::f32, {8192}}}},
      // Few outputs over very long rows: several blocks per output, meeting in scratch memory.
      {"split_max", [](const V& in) { return V{ops::max(in[0], {1})}; }, {{DType::f32, {4, 65536}}}},
      // Row kernels: a reduction's result used over its own row in the same kernel. RMSNorm's rows
      // over a warp's lanes, softmax's shift (max with its NaN flag) over a block, short rows alone.
      {"rms_norm_lanes",
       [](const V& in) { return V{ops::rms_norm(in[0], {128}, in[1])}; },
       {{DType::f32, {64, 128}}, {DType::f32, {128}}}},
      {"shift_by_max_block",
       [](const V& in) { return V{ops::exp(in[0] - ops::max(in[0], {1}, true))}; },
       {{DType::f32, {4, 4096}}}},
      {"row_share_alone", [](const V& in) { return V{in[0] / ops::sum(in[0], {1}, true)}; }, {{DType::f32, {300, 12}}}},
      // Chained reductions: softmax's sum of exp(x - max) over lanes, LayerNorm's variance around the
      // mean over a block, each a walk after the first reduction is shared.
      {"softmax_lanes",
       [](const V& in) {
         const Tensor e = ops::exp(in[0] - ops::max(in[0], {1}, true));
         return V{e / ops::sum(e, {1}, true)};
       },
       {{DType::f32, {64, 256}}}},
      {"layer_norm_block",
       [](const V& in) { return V{ops::layer_norm(in[0], {4096}, in[1], in[2], 1e-5)}; },
       {{DType::f32, {2, 4096}}, {DType::f32, {4096}}, {DType::f32, {4096}}}},
      {"half_load_store",
       [](const V& in) {
         const Tensor e = ops::expm1(in[0]);
         return V{e, ops::cast(e, DType::bf16) * in[1]};
       },
       {{DType::f16, {16}}, {DType::bf16, {16}}}},
      {"math_and_bytes",
       [](const V& in) {
         const Tensor t = ops::erf(in[0]);
         return V{ops::cast(t * 100.0, DType::i8), ops::gt(ops::log1p(t), ops::scalar_like(t, 0.5)),
                  ops::logical_and(in[1], ops::gt(t, ops::scalar_like(t, 0.0)))};
       },
       {{DType::f32, {6}}, {DType::boolean, {6}}}},
  };
}

lower::Kernel build(const GoldenKernel& g) {
  const auto clusters = cluster_all(trace(g.fn, g.types), /*half_types=*/true);
  if (clusters.size() != 1) throw Error(g.name + ": expected one cluster");
  return lower::build_loop_kernel(clusters[0], g.name);
}

struct DialectFile {
  const codegen::Dialect* dialect;
  const char* extension;
};
const DialectFile kDialects[] = {
    {&codegen::c_dialect(), "c"}, {&codegen::cuda_dialect(), "cu"}, {&codegen::glsl_dialect(), "comp"}};

std::filesystem::path golden_dir() {
  return std::filesystem::path(TESSERA_SOURCE_DIR) / "tests/codegen/golden";
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The first differing line, with its neighbours, as a unified-diff-like excerpt.
std::string first_difference(const std::string& expected, const std::string& got) {
  auto lines = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string l; std::getline(ss, l);) out.push_back(l);
    return out;
  };
  const auto e = lines(expected), g = lines(got);
  size_t i = 0;
  while (i < e.size() && i < g.size() && e[i] == g[i]) ++i;
  std::string msg = fmt::format("first difference at line {}:\n", i + 1);
  for (size_t k = i >= 2 ? i - 2 : 0; k < i; ++k) msg += "  " + e[k] + "\n";
  for (size_t k = i; k < std::min(e.size(), i + 3); ++k) msg += "- " + e[k] + "\n";
  for (size_t k = i; k < std::min(g.size(), i + 3); ++k) msg += "+ " + g[k] + "\n";
  return msg;
}

std::string emitted(const GoldenKernel& g, const codegen::Dialect& d) {
  return codegen::emit_kernel(build(g), "tsr_kernel_0", d);
}

}  // namespace

TEST(DialectGoldens, MatchTheFiles) {
  const bool update = std::getenv("TESSERA_UPDATE_GOLDEN") && std::string(std::getenv("TESSERA_UPDATE_GOLDEN")) == "1";
  for (const GoldenKernel& g : golden_kernels()) {
    for (const DialectFile& df : kDialects) {
      const std::filesystem::path path = golden_dir() / (g.name + "." + df.extension);
      const std::string src = emitted(g, *df.dialect);
      if (update) {
        std::filesystem::create_directories(golden_dir());
        std::ofstream(path) << src;
        continue;
      }
      ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; run with TESSERA_UPDATE_GOLDEN=1";
      const std::string expected = read_file(path);
      EXPECT_EQ(src, expected) << path.filename() << " differs (TESSERA_UPDATE_GOLDEN=1 rewrites it); "
                               << first_difference(expected, src);
    }
  }
}

TEST(DialectGoldens, CudaHasNoRestrict) {
  // In-place kernels alias an output with an input read at the same index: __restrict__ would be a lie.
  for (const GoldenKernel& g : golden_kernels()) {
    EXPECT_EQ(emitted(g, codegen::cuda_dialect()).find("restrict"), std::string::npos) << g.name;
  }
}

TEST(DialectGoldens, GlslTakesOneKernelPerModule) {
  const auto kernels = golden_kernels();
  const std::vector<lower::Kernel> two = {build(kernels[0]), build(kernels[1])};
  EXPECT_THROW(codegen::emit_module(two, {"a", "b"}, codegen::glsl_dialect()), Error);
  EXPECT_EQ(codegen::emit_modules(two, {"a", "b"}, codegen::glsl_dialect()).size(), 2u);
  EXPECT_EQ(codegen::emit_modules(two, {"a", "b"}, codegen::cuda_dialect()).size(), 1u);
}

TEST(DialectGoldens, GlslRefusesOffsetsBeyond32Bits) {
  const GoldenKernel big{"big",
                         [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1.0}; },
                         {{DType::u8, {int64_t{1} << 32}}}};
  EXPECT_THROW(emitted(big, codegen::glsl_dialect()), Error);
  EXPECT_NO_THROW(emitted(big, codegen::cuda_dialect()));
}

TEST(DialectGoldens, CudaCompilesWithNvrtc) {
#if !defined(TESSERA_HAVE_NVRTC)
  GTEST_SKIP() << "NVRTC not found at configure time (find_package(CUDAToolkit))";
#else
  for (const GoldenKernel& g : golden_kernels()) {
    const std::string src = emitted(g, codegen::cuda_dialect());
    nvrtcProgram prog;
    ASSERT_EQ(nvrtcCreateProgram(&prog, src.c_str(), (g.name + ".cu").c_str(), 0, nullptr, nullptr), NVRTC_SUCCESS);
    // cuda_fp16.h / cuda_bf16.h come from the toolkit's include directory.
    const std::string include = std::string("-I") + TESSERA_CUDA_INCLUDE_DIR;
    const char* options[] = {"--gpu-architecture=sm_90", include.c_str()};
    const nvrtcResult r = nvrtcCompileProgram(prog, 2, options);
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    EXPECT_EQ(r, NVRTC_SUCCESS) << g.name << ": " << nvrtcGetErrorString(r) << "\n" << log << "\n" << src;
    nvrtcDestroyProgram(&prog);
  }
#endif
}

TEST(DialectGoldens, GlslCompilesWithGlslang) {
  std::string tool;
  for (const char* candidate : {"glslangValidator", "glslc"}) {
    if (std::system(fmt::format("command -v {} > /dev/null 2>&1", candidate).c_str()) == 0) {
      tool = candidate;
      break;
    }
  }
  if (tool.empty())
    GTEST_SKIP() << "neither glslangValidator nor glslc is installed: the GLSL goldens are not compiled";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("tessera-glsl-{}", ::getpid());
  std::filesystem::create_directories(dir);
  for (const GoldenKernel& g : golden_kernels()) {
    const std::filesystem::path src = dir / (g.name + ".comp"), spv = dir / (g.name + ".spv");
    std::ofstream(src) << emitted(g, codegen::glsl_dialect());
    const std::string cmd =
        tool == "glslc"
            ? fmt::format("glslc --target-env=vulkan1.2 -o {} {} 2>&1", spv.string(), src.string())
            : fmt::format("glslangValidator -V --target-env vulkan1.2 -o {} {} 2>&1", spv.string(), src.string());
    EXPECT_EQ(std::system(cmd.c_str()), 0) << g.name << ": " << cmd;
  }
  std::filesystem::remove_all(dir);
}
