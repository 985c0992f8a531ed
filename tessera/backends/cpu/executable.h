#pragma once
// The CPU backend's Executable: a shared Program plus what one instance needs to run it — the bound
// constants, the arena, the per-buffer addresses and staging for unusual inputs and outputs.
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/backends/common/program.h"

namespace tessera::backends::cpu {

class CpuExecutable final : public Executable {
 public:
  CpuExecutable(ir::Graph graph, std::shared_ptr<const common::Program> program, std::vector<Array> constants,
                CompileInfo info, std::vector<Alias> aliases = {});
  std::vector<Array> run(const std::vector<Array>& inputs) override;
  void run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) override;
  const ir::Graph& graph() const override { return graph_; }
  int64_t peak_bytes() const override { return program_->arena_bytes; }

  const CompileInfo& info() const { return info_; }
  const common::Program& program() const { return *program_; }

 private:
  void check_inputs(const std::vector<Array>& inputs) const;
  void check_outputs(const std::vector<Array>& outputs) const;
  void execute(const std::vector<Array>& inputs, std::vector<Array>& outputs);

  // An output that is a graph input or constant seen through view ops only: run() returns it as a
  // view of the caller's array (as the reference backend does) instead of a copy.
  struct ViewOfLeaf {
    int input = -1;                // graph input index, or -1 for a constant
    Array constant;                // the constant's data when input < 0
    std::vector<ir::Value> views;  // the view nodes' outputs, from the leaf outwards
  };
  void find_views_of_leaves();
  Array view_of_leaf(const ViewOfLeaf& v, const std::vector<Array>& inputs) const;

  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };

  ir::Graph graph_;
  std::shared_ptr<const common::Program> program_;
  std::vector<Array> constants_;
  CompileInfo info_;
  std::mutex mutex_;  // one run at a time: runs share the arena
  std::unique_ptr<std::byte, FreeDeleter> arena_;
  std::vector<std::byte*> addresses_;  // per buffer, for the current run
  std::vector<std::byte*> input_at_, output_at_;
  std::vector<Array> input_staging_, output_staging_;
  std::vector<bool> output_staged_;
  // Per output, the aliased input it may be written over directly (common::can_write_over_input), else -1.
  std::vector<int32_t> writes_over_input_;
  std::vector<const void*> kernel_inputs_;
  std::vector<void*> kernel_outputs_;
  std::vector<std::byte> step_scratch_;
  std::vector<std::optional<ViewOfLeaf>> views_of_leaves_;  // per output
  bool scratch_reserved_ = false;  // every pool thread has the scratch the first run measured
  // With $TESSERA_PROFILE_STEPS set, time per step, printed when the executable is destroyed (the 25
  // slowest steps; every step with TESSERA_PROFILE_STEPS=all).
  bool profile_ = false;
  std::vector<double> step_seconds_;
  int64_t runs_ = 0;
  bool profiled_first_run_ = false;

 public:
  ~CpuExecutable() override;
};

}  // namespace tessera::backends::cpu
