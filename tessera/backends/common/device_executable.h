#pragma once
// What the executables of the device backends (CUDA, Vulkan) share: a Program from the shared lowering
// plus, per instance, the device arena, the constants uploaded once, and staging for inputs and
// outputs that are not packed device memory. run() and run_into() check their arguments, write an
// aliased output straight over its input where the program allows it (else compute into staging and
// copy back), and compare with the reference backend under TESSERA_VERIFY. A backend supplies
// launch(): what it does with the resolved buffer addresses (record a command buffer, launch on a
// stream, replay a captured graph).
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/backends/backend.h"
#include "tessera/backends/common/program.h"

namespace tessera::backends::common {

class DeviceExecutable : public Executable {
 public:
  std::vector<Array> run(const std::vector<Array>& inputs) final;
  void run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) final;
  const ir::Graph& graph() const final { return graph_; }
  int64_t peak_bytes() const final { return program_->arena_bytes; }
  Device& device() const final { return device_; }
  /// The lowered program (steps, memory plan).
  const Program& program() const { return *program_; }

 protected:
  // `backend` names it in verification reports; device memory is used in place when it is packed and
  // its address is a multiple of `alignment` bytes (0: of the element size).
  DeviceExecutable(std::string backend, Device& device, ir::Graph graph, std::shared_ptr<const Program> program,
                   std::vector<Array> constants, std::vector<Alias> aliases, size_t alignment);

  // Before the arguments are bound, with the run's lock held (CUDA makes its device current here).
  virtual void prepare() {}
  // Runs the program's steps over ctx.buffers (resolved for this run), with the run's lock held.
  virtual void launch(RunContext& ctx) = 0;
  // After staged outputs are copied back, with the run's lock held (Vulkan reports bad data here).
  virtual void finish() {}

  // This run's buffer addresses (what ctx.buffers points at): CUDA keys its captured graphs by them.
  const std::vector<std::byte*>& addresses() const { return addresses_; }

  // Held for a whole run; a backend's accessors of per-run state take it too.
  mutable std::mutex run_mutex_;

 private:
  void execute(const std::vector<Array>& inputs, std::vector<Array>& outputs);
  bool usable_in_place(const Array& a) const;

  std::string backend_;
  Device& device_;
  ir::Graph graph_;
  std::shared_ptr<const Program> program_;
  std::vector<Array> constants_;  // on the device
  size_t alignment_;
  Array arena_;  // device bytes
  std::vector<std::byte*> addresses_;
  std::vector<Array> input_staging_, output_staging_;
  std::vector<int32_t> writes_over_input_;  // per output, the aliased input it may overwrite, else -1
};

}  // namespace tessera::backends::common
