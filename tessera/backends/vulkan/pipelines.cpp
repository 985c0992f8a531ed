#include "tessera/backends/vulkan/pipelines.h"

#include <shaderc/shaderc.h>

#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/common/kernel_cache.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/vulkan_api.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

// The cache's format tag: bump it when the SPIR-V the backend asks shaderc for changes.
constexpr const char* kSpirvFormat = "vulkan-spirv-1";

std::string hex(const uint8_t* bytes, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", bytes[i]);
  return s;
}

// One shaderc compile; throws with the saved source's path and the compiler's message.
std::vector<uint32_t> compile_glsl(const std::string& glsl, const std::string& what, const common::CacheEntry& entry) {
  shaderc_compiler_t compiler = shaderc_compiler_initialize();
  shaderc_compile_options_t options = shaderc_compile_options_initialize();
  shaderc_compile_options_set_target_env(options, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
  shaderc_compile_options_set_optimization_level(options, shaderc_optimization_level_performance);
  shaderc_compilation_result_t result = shaderc_compile_into_spv(compiler, glsl.data(), glsl.size(),
                                                                 shaderc_compute_shader, what.c_str(), "main", options);
  const bool ok = shaderc_result_get_compilation_status(result) == shaderc_compilation_status_success;
  std::vector<uint32_t> words;
  std::string message;
  if (ok) {
    words.resize(shaderc_result_get_length(result) / 4);
    std::memcpy(words.data(), shaderc_result_get_bytes(result), words.size() * 4);
  } else {
    message = shaderc_result_get_error_message(result);
  }
  shaderc_result_release(result);
  shaderc_compile_options_release(options);
  shaderc_compiler_release(compiler);
  if (!ok) {
    std::string path;
    try {
      path = common::store_cached(entry, ".failed.comp", glsl);
    } catch (const std::exception& e) {
      path = fmt::format("(not saved: {})", e.what());
    }
    while (!message.empty() && message.back() == '\n') message.pop_back();
    throw Error(fmt::format("vulkan: shader '{}' failed to compile (GLSL saved at {}): {}", what, path, message));
  }
  return words;
}

}  // namespace

Pipelines::Pipelines(Context& context) : context_(context) {
  const std::string initial = common::read_file(cache_file());
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = initial.size();
  ci.pInitialData = initial.empty() ? nullptr : initial.data();
  // A file of another driver version is ignored by the driver (its header does not match).
  if (vk().vkCreatePipelineCache(context_.vk_device(), &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    check(vk().vkCreatePipelineCache(context_.vk_device(), &ci, nullptr, &cache_), "vkCreatePipelineCache");
  }
}

Pipelines::~Pipelines() {
  const VkDevice d = context_.vk_device();
  for (auto& [key, p] : pipelines_) {
    vk().vkDestroyPipeline(d, p->pipeline, nullptr);
    vk().vkDestroyPipelineLayout(d, p->layout, nullptr);
    vk().vkDestroyDescriptorSetLayout(d, p->set_layout, nullptr);
  }
  if (cache_ != VK_NULL_HANDLE) vk().vkDestroyPipelineCache(d, cache_, nullptr);
}

std::string Pipelines::cache_file() const {
  const VkPhysicalDeviceProperties& p = context_.properties();
  return fmt::format("{}/vulkan-pipelines-{:04x}-{:04x}-{}.bin", common::kernel_cache_dir(), p.vendorID, p.deviceID,
                     hex(p.pipelineCacheUUID, VK_UUID_SIZE));
}

std::vector<uint32_t> Pipelines::spirv(const std::string& glsl, const std::string& what) {
  const common::CacheEntry entry = common::cache_entry(kSpirvFormat, glsl, "shaderc");
  const std::string cached = common::find_cached(entry, ".spv");
  if (!cached.empty()) {
    const std::string bytes = common::read_file(cached);
    // A SPIR-V module starts with its magic number; anything else is rebuilt.
    if (bytes.size() >= 20 && bytes.size() % 4 == 0) {
      std::vector<uint32_t> words(bytes.size() / 4);
      std::memcpy(words.data(), bytes.data(), bytes.size());
      if (words[0] == 0x07230203u) {
        std::lock_guard<std::mutex> lock(mutex_);
        stats_.spirv_disk_hits += 1;
        return words;
      }
    }
  }
  std::vector<uint32_t> words = compile_glsl(glsl, what, entry);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.shaderc_compiles += 1;
  }
  try {
    common::store_cached(entry, ".spv", std::string_view(reinterpret_cast<const char*>(words.data()), words.size() * 4));
  } catch (const std::exception&) {
    // A read-only cache folder costs a recompile next time, nothing more.
  }
  return words;
}

std::shared_ptr<const Pipeline> Pipelines::pipeline(const std::string& glsl, int bindings, const std::string& what) {
  const std::string key = common::content_hash(glsl) + fmt::format("/{}", bindings);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = pipelines_.find(key); it != pipelines_.end()) {
      stats_.pipeline_hits += 1;
      return it->second;
    }
  }
  const std::vector<uint32_t> code = spirv(glsl, what);
  const VkDevice d = context_.vk_device();
  auto p = std::make_shared<Pipeline>();
  p->bindings = bindings;
  p->name = what;
  std::vector<VkDescriptorSetLayoutBinding> slots(static_cast<size_t>(bindings));
  for (int i = 0; i < bindings; ++i) {
    slots[static_cast<size_t>(i)] = {static_cast<uint32_t>(i), VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                     VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = static_cast<uint32_t>(bindings);
  li.pBindings = slots.data();
  check(vk().vkCreateDescriptorSetLayout(d, &li, nullptr, &p->set_layout), "vkCreateDescriptorSetLayout");
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p->set_layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &push;
  check(vk().vkCreatePipelineLayout(d, &pli, nullptr, &p->layout), "vkCreatePipelineLayout");
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = code.size() * 4;
  mi.pCode = code.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(vk().vkCreateShaderModule(d, &mi, nullptr, &module), "vkCreateShaderModule");
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.layout = p->layout;
  const VkResult r = vk().vkCreateComputePipelines(d, cache_, 1, &ci, nullptr, &p->pipeline);
  vk().vkDestroyShaderModule(d, module, nullptr);
  if (r != VK_SUCCESS) {
    throw Error(fmt::format("vulkan: the driver could not make a pipeline of shader '{}': {}", what, result_name(r)));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.pipelines += 1;
  dirty_ = true;
  auto [it, inserted] = pipelines_.emplace(key, std::move(p));
  return it->second;
}

void Pipelines::save_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dirty_) return;
  size_t size = 0;
  if (vk().vkGetPipelineCacheData(context_.vk_device(), cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::string data(size, '\0');
  if (vk().vkGetPipelineCacheData(context_.vk_device(), cache_, &size, data.data()) != VK_SUCCESS) return;
  data.resize(size);
  try {
    common::make_directories(common::kernel_cache_dir());
    common::write_file_atomically(cache_file(), data);
    dirty_ = false;
  } catch (const std::exception&) {
    // Not fatal: the next process compiles its pipelines again.
  }
}

PipelineStats Pipelines::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace tessera::backends::vulkan
