#include "tessera/backends/vulkan/recorder.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/vulkan_api.h"
#include "tessera/backends/vulkan/vulkan_device.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

constexpr uint32_t kSetsPerPool = 128;
constexpr uint32_t kDescriptorsPerPool = 128 * 16;
constexpr uint32_t kMaxProfiledDispatches = 4096;

uint64_t handle_value(VkBuffer b) { return reinterpret_cast<uint64_t>(b); }

}  // namespace

Recorder::Recorder(Context& context, bool profile) : context_(context), profile_(profile) {}

Recorder::~Recorder() {
  const VkDevice d = context_.vk_device();
  for (VkDescriptorPool p : pools_) vk().vkDestroyDescriptorPool(d, p, nullptr);
  if (queries_ != VK_NULL_HANDLE) vk().vkDestroyQueryPool(d, queries_, nullptr);
}

uint32_t Recorder::max_groups() const { return context_.properties().limits.maxComputeWorkGroupCount[0]; }

void Recorder::begin() {
  const VkDevice d = context_.vk_device();
  for (VkDescriptorPool p : pools_) check(vk().vkResetDescriptorPool(d, p, 0), "vkResetDescriptorPool");
  pool_in_use_ = 0;
  hazards_.clear();
  stats_ = RecordStats{};
  names_.clear();
  read_back_host_ = nullptr;
  commands_ = context_.new_command_buffer();
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vk().vkBeginCommandBuffer(commands_, &bi), "vkBeginCommandBuffer");
  // Earlier submissions (uploads, other executables) are complete and visible before the first dispatch.
  VkMemoryBarrier all{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  all.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  all.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  vk().vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1,
                            &all, 0, nullptr, 0, nullptr);
  if (profile_) {
    if (queries_ == VK_NULL_HANDLE) {
      VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = 2 * kMaxProfiledDispatches;
      check(vk().vkCreateQueryPool(d, &qi, nullptr, &queries_), "vkCreateQueryPool");
      query_capacity_ = qi.queryCount;
    }
    vk().vkCmdResetQueryPool(commands_, queries_, 0, query_capacity_);
  }
}

VkDescriptorSet Recorder::new_set(const Pipeline& pipeline) {
  const VkDevice d = context_.vk_device();
  for (;;) {
    if (pool_in_use_ == pools_.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerPool};
      VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pi.maxSets = kSetsPerPool;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      check(vk().vkCreateDescriptorPool(d, &pi, nullptr, &pool), "vkCreateDescriptorPool");
      pools_.push_back(pool);
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pools_[pool_in_use_];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &pipeline.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkResult r = vk().vkAllocateDescriptorSets(d, &ai, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) check(r, "vkAllocateDescriptorSets");
    pool_in_use_ += 1;  // this pool is full: the next (made if needed)
  }
}

void Recorder::barrier() {
  std::vector<VkBufferMemoryBarrier> barriers;
  for (const ByteRange& w : hazards_.pending_writes()) {
    VkBufferMemoryBarrier b{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.buffer = reinterpret_cast<VkBuffer>(w.buffer);
    b.offset = w.begin;
    b.size = w.end - w.begin;
    barriers.push_back(b);
  }
  // Write-after-read needs only the execution dependency, which the barrier carries even with no ranges.
  vk().vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0,
                            nullptr, static_cast<uint32_t>(barriers.size()), barriers.data(), 0, nullptr);
  hazards_.clear();
  stats_.barriers += 1;
}

void Recorder::dispatch(const Pipeline& pipeline, const std::vector<BufferUse>& buffers, std::vector<uint32_t> push,
                        int shift_word, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                        int shifts_per_word) {
  TESSERA_CHECK(shifts_per_word == 1 || shifts_per_word == 4, "vulkan: {} shifts a push word (1 or 4)", shifts_per_word);
  TESSERA_CHECK(static_cast<int>(buffers.size()) == pipeline.bindings, "vulkan: shader '{}' takes {} buffers, {} given",
                pipeline.name, pipeline.bindings, buffers.size());
  TESSERA_CHECK(push.size() * 4 <= kPushBytes, "vulkan: shader '{}' pushes {} bytes (at most {})", pipeline.name,
                push.size() * 4, kPushBytes);
  if (groups_x == 0 || groups_y == 0 || groups_z == 0) return;
  const VulkanDevice& memory = context_.memory();
  const VkPhysicalDeviceLimits& limits = context_.properties().limits;
  const uint64_t align = std::max<uint64_t>(limits.minStorageBufferOffsetAlignment, 1);
  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  std::vector<ByteRange> reads, writes;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferUse& use = buffers[i];
    const VulkanDevice::Location at = memory.locate(use.address);
    const uint64_t start = at.offset / align * align, skipped = at.offset - start;
    if (skipped != 0) {
      TESSERA_CHECK(shift_word >= 0 && skipped % use.element_size == 0,
                    "vulkan: shader '{}' buffer {} starts {} bytes past an aligned offset, which it cannot take",
                    pipeline.name, i, skipped);
    }
    if (shift_word >= 0) {
      const size_t word = static_cast<size_t>(shift_word) + i / static_cast<size_t>(shifts_per_word);
      if (push.size() <= word) push.resize(word + 1, 0);
      const auto shift = static_cast<uint32_t>(skipped / use.element_size);
      if (shifts_per_word == 1) {
        push[word] = shift;
      } else {
        TESSERA_CHECK(shift < 256, "vulkan: shader '{}' buffer {} starts {} elements past an aligned offset (a byte "
                      "holds its shift)", pipeline.name, i, shift);
        const uint32_t bit = 8 * static_cast<uint32_t>(i % 4);
        push[word] = (push[word] & ~(0xffu << bit)) | (shift << bit);
      }
    }
    // At least one element bound (an empty view still needs a valid descriptor).
    const uint64_t range = std::min(at.available + skipped, std::max<uint64_t>(skipped + use.bytes, 16));
    TESSERA_CHECK(range <= limits.maxStorageBufferRange,
                  "vulkan: shader '{}' binds {} bytes, more than the device's maxStorageBufferRange ({})",
                  pipeline.name, range, limits.maxStorageBufferRange);
    infos[i] = {at.buffer, start, range};
    if (use.order_free) continue;
    const ByteRange r{handle_value(at.buffer), at.offset, at.offset + std::max<uint64_t>(use.bytes, 1)};
    (use.written ? writes : reads).push_back(r);
  }
  if (hazards_.needs_barrier(reads, writes)) barrier();
  hazards_.record(reads, writes);

  const VkDescriptorSet set = new_set(pipeline);
  std::vector<VkWriteDescriptorSet> updates(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    VkWriteDescriptorSet& w = updates[i];
    w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = static_cast<uint32_t>(i);
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &infos[i];
  }
  vk().vkUpdateDescriptorSets(context_.vk_device(), static_cast<uint32_t>(updates.size()), updates.data(), 0, nullptr);
  vk().vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  vk().vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0, nullptr);
  push.resize(kPushBytes / 4, 0);
  vk().vkCmdPushConstants(commands_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes, push.data());
  const bool timed = profile_ && names_.size() < kMaxProfiledDispatches;
  if (timed) {
    const auto q = static_cast<uint32_t>(2 * names_.size());
    vk().vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, q);
  }
  TESSERA_CHECK(groups_y <= limits.maxComputeWorkGroupCount[1] && groups_z <= limits.maxComputeWorkGroupCount[2],
                "vulkan: shader '{}' asks for {}x{} workgroups along y and z, more than the device allows ({}x{})",
                pipeline.name, groups_y, groups_z, limits.maxComputeWorkGroupCount[1], limits.maxComputeWorkGroupCount[2]);
  vk().vkCmdDispatch(commands_, std::min(groups_x, max_groups()), groups_y, groups_z);
  if (timed) {
    const auto q = static_cast<uint32_t>(2 * names_.size() + 1);
    vk().vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, q);
    names_.push_back(pipeline.name);
  }
  stats_.dispatches += 1;
}

void Recorder::read_back(const void* address, void* host, size_t bytes) {
  TESSERA_CHECK(read_back_host_ == nullptr, "vulkan: one read-back a run");
  context_.memory().record_download(commands_, address, bytes);
  read_back_host_ = host;
  read_back_bytes_ = bytes;
}

void Recorder::finish(const char* what) {
  check(vk().vkEndCommandBuffer(commands_), "vkEndCommandBuffer");
  void* host = read_back_host_;
  read_back_host_ = nullptr;
  try {
    context_.submit_and_wait(commands_, what);
  } catch (...) {
    context_.reset_commands();
    throw;
  }
  context_.reset_commands();
  commands_ = VK_NULL_HANDLE;
  if (host != nullptr) context_.memory().read_staged(host, read_back_bytes_);
  if (!profile_ || names_.empty()) return;
  std::vector<uint64_t> ticks(2 * names_.size());
  check(vk().vkGetQueryPoolResults(context_.vk_device(), queries_, 0, static_cast<uint32_t>(ticks.size()),
                                   ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const double ns_per_tick = context_.properties().limits.timestampPeriod;
  double total = 0;
  for (size_t i = 0; i < names_.size(); ++i) {
    const double us = static_cast<double>(ticks[2 * i + 1] - ticks[2 * i]) * ns_per_tick / 1000.0;
    stats_.step_us.emplace_back(names_[i], us);
    total += us;
    std::fprintf(stderr, "vulkan profile %s: dispatch %zu %s: %.1f us\n", what, i, names_[i].c_str(), us);
  }
  std::fprintf(stderr, "vulkan profile %s: %zu dispatches, %.1f us\n", what, names_.size(), total);
}

}  // namespace tessera::backends::vulkan
