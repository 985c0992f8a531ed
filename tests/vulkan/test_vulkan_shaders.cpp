// Shaders on Vulkan: a GLSL error names the saved source and shaderc's message; SPIR-V comes back
// from the disk cache and pipelines from memory; the generated kernels bind shifted buffers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tessera/backends/backend.h"
#include "tessera/backends/common/kernel_cache.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/copy_shader.h"
#include "tessera/backends/vulkan/matmul_shader.h"
#include "tessera/backends/vulkan/pipelines.h"
#include "tessera/backends/vulkan/quant_matvec_wide.h"
#include "tessera/backends/vulkan/vulkan_backend.h"
#include "tessera/core/error.h"
#include "test_util.h"

namespace tessera::test {
namespace {

backends::vulkan::Pipelines& pipelines() {
  backends::backend_by_name("vulkan");  // throws with the reason when unavailable
  return backends::vulkan::vulkan_context()->pipelines();
}

// Points the kernel cache at a fresh folder for one test.
class ScopedCacheDir {
 public:
  ScopedCacheDir() {
    dir_ = (std::filesystem::temp_directory_path() /
            ("tessera-vulkan-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++)))
               .string();
    const char* old = std::getenv("TESSERA_CACHE_DIR");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("TESSERA_CACHE_DIR", dir_.c_str(), 1);
  }
  ~ScopedCacheDir() {
    if (had_) {
      setenv("TESSERA_CACHE_DIR", old_.c_str(), 1);
    } else {
      unsetenv("TESSERA_CACHE_DIR");
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::string dir_, old_;
  bool had_ = false;
};

TEST(VulkanShaders, ACompileErrorNamesTheSavedGlslAndShadercsMessage) {
  ScopedCacheDir cache;
  const std::string bad = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared_thing = 1; }\n";
  try {
    pipelines().spirv(bad, "broken_kernel");
    ADD_FAILURE() << "the shader should not compile";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("shader 'broken_kernel' failed to compile"), std::string::npos) << what;
    EXPECT_NE(what.find("undeclared_thing"), std::string::npos) << "shaderc's message: " << what;
    const size_t at = what.find("GLSL saved at ");
    ASSERT_NE(at, std::string::npos) << what;
    const std::string path = what.substr(at + 14, what.find(')', at) - at - 14);
    EXPECT_EQ(path.rfind(cache.dir(), 0), 0u) << path;
    EXPECT_EQ(backends::common::read_file(path), bad);
  }
}

TEST(VulkanShaders, SpirvComesFromTheDiskCacheAndPipelinesFromMemory) {
  ScopedCacheDir cache;
  const std::string glsl = backends::vulkan::strided_copy_glsl(4) + "// cache test " + cache.dir() + "\n";
  const auto before = pipelines().stats();
  const auto first = pipelines().spirv(glsl, "copy");
  EXPECT_EQ(first[0], 0x07230203u) << "SPIR-V magic";
  const auto second = pipelines().spirv(glsl, "copy");
  EXPECT_EQ(first, second);
  const auto mid = pipelines().stats();
  EXPECT_EQ(mid.shaderc_compiles, before.shaderc_compiles + 1);
  EXPECT_EQ(mid.spirv_disk_hits, before.spirv_disk_hits + 1);
  auto p1 = pipelines().pipeline(glsl, 2, "copy");
  auto p2 = pipelines().pipeline(glsl, 2, "copy");
  EXPECT_EQ(p1.get(), p2.get());
  EXPECT_EQ(pipelines().stats().pipeline_hits, mid.pipeline_hits + 1);
  pipelines().save_cache();
  bool saved = false;
  for (const auto& f : std::filesystem::directory_iterator(cache.dir())) {
    saved = saved || f.path().filename().string().rfind("vulkan-pipelines-", 0) == 0;
  }
  EXPECT_TRUE(saved) << "the driver's pipeline cache should be written to " << cache.dir();
}

TEST(VulkanShaders, HandWrittenShadersCompile) {
  for (int block : {4, 8}) {
    EXPECT_FALSE(pipelines().spirv(backends::vulkan::matmul_glsl(DType::f32, block), "matmul_f32").empty());
    EXPECT_FALSE(pipelines().spirv(backends::vulkan::matmul_glsl(DType::f16, block), "matmul_f16").empty());
  }
  // shaderc compiles the cooperative-matrix product whatever the device (it runs only where one offers them).
  EXPECT_FALSE(pipelines().spirv(backends::vulkan::matmul_coopmat_glsl(), "matmul_f16_coopmat").empty());
  for (uint32_t es : {1u, 2u, 4u, 8u}) EXPECT_FALSE(pipelines().spirv(backends::vulkan::strided_copy_glsl(es), "copy").empty());
  EXPECT_THROW(backends::vulkan::strided_copy_glsl(3), Error);
  // The wide matvec as GPUs get it (unrolled; lavapipe runs it rolled), with and without shuffles.
  using backends::vulkan::WideMatvecShape;
  for (auto type : {quant::GgmlType::q4_0, quant::GgmlType::q4_1, quant::GgmlType::q8_0, quant::GgmlType::q4_k,
                    quant::GgmlType::q5_k}) {
    for (int rows : {1, 8}) {
      for (bool shuffle : {true, false}) {
        WideMatvecShape shape = backends::vulkan::wide_matvec_shape(type, 2048, rows);
        EXPECT_FALSE(pipelines().spirv(backends::vulkan::quant_matvec_wide_glsl(type, 2048, rows, shape, shuffle, {true, true}),
                                       "quant_matvec_wide").empty());
      }
    }
  }
}

}  // namespace
}  // namespace tessera::test
