#pragma once
// Lowering a graph into a Program, on any backend: the builder that a backend's library lowerings use
// to look up their operands, define their results and emit steps; the table of those lowerings; and
// the few steps the builder itself needs, which each backend makes its own way (StepFactory).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/backends/common/cache_appends.h"
#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/common/program.h"
#include "tessera/ir/graph.h"
#include "tessera/ir/op_def.h"
#include "tessera/kernels/activation.h"
#include "tessera/runtime/memory_plan.h"

namespace tessera::backends::common {

struct ValueInfo {
  DType dtype = DType::f32;
  int32_t buffer = -1;
  Layout layout;
  int64_t element_offset() const { return layout.offset; }
};

// A matmul's or convolution's fused tail: [+ bias] [activation] [+ residual] [activation], each step
// the only use of the previous value.
struct Epilogue {
  // A matmul whose only use is a transpose of its last two axes computes the transposed product
  // directly (C^T = B^T A^T), so that consumers read it row by row (gradients of x @ W^T).
  bool transposed = false;
  ir::Value bias;  // [n] (or [1, ..., 1, n]); undefined if none
  kernels::Activation activation = kernels::Activation::none;
  ir::Value residual;                  // the result's shape; undefined if none
  kernels::Activation post_activation = kernels::Activation::none;  // after the residual
  std::vector<const ir::Node*> nodes;  // absorbed nodes, in order
  ir::Value result;                    // what the fused step produces
  // Whether absorbing the tail depended on a constant's value (the bounds of a clamp read as ReLU6):
  // a plan made with it serves only graphs whose small constants are the same.
  bool reads_constant_values = false;
};

// A bug found while lowering: the node being lowered when it showed (null when it concerns the whole
// program) and what went wrong. The backend reports it as an internal compiler error
// (backends/internal_error.h), with `workaround` as the switch to suggest.
class LoweringFault : public std::runtime_error {
 public:
  LoweringFault(const ir::Node* node, const std::string& what, std::string workaround = {})
      : std::runtime_error(what), node_(node), workaround_(std::move(workaround)) {}
  const ir::Node* node() const { return node_; }
  const std::string& workaround() const { return workaround_; }

 private:
  const ir::Node* node_;
  std::string workaround_;
};

// The steps the builder and the generic lowering emit themselves, made by the backend: a strided copy
// (materialising a view, filling an output), and an op run by its reference kernel where nothing
// better lowers it. A backend that cannot run reference kernels on its memory throws from fallback()
// (a LoweringFault, or an Error the lowering turns into one).
class StepFactory {
 public:
  virtual ~StepFactory() = default;
  virtual std::unique_ptr<Step> copy(const CopyPlan& plan, Operand src, Operand dst, std::string what) const = 0;
  virtual std::unique_ptr<Step> fallback(const ir::Node& node, std::vector<Operand> inputs,
                                         std::vector<ir::TensorType> input_types,
                                         std::vector<Operand> outputs) const = 0;
};

class Lowering {
 public:
  // `steps` must outlive the Lowering.
  Lowering(const ir::Graph& graph, FusionSet fusion, const StepFactory& steps);

  const ir::Graph& graph() const { return graph_; }
  Program& program() { return *program_; }
  FusionSet fusion() const { return fusion_; }
  const StepFactory& steps() const { return steps_; }
  // The node whose steps are being emitted (named by faults and by the program verifier).
  void set_current_node(const ir::Node* node) { current_ = node; }
  const ir::Node* current_node() const { return current_; }

  // Values.
  bool has(const ir::Value& v) const { return ids_.count(v) != 0; }
  int32_t value(const ir::Value& v) const;  // throws LoweringFault if the value was not defined yet
  const ValueInfo& info(int32_t id) const { return values_[static_cast<size_t>(id)]; }
  int32_t produce(const ir::Value& v);                               // v in a fresh packed arena buffer
  int32_t temporary(DType dtype, const Shape& shape);                // an anonymous packed arena value
  int32_t alias(const ir::Value& v, int32_t source, Layout layout);  // a view of source's buffer
  int32_t bind(const ir::Value& v, int32_t buffer, DType dtype);     // v packed at the start of buffer
  // The value itself when packed, else a packed copy (made once per value).
  int32_t packed(int32_t id);
  // A constant computed from the whole constant `source` when an executable binds its constants (once,
  // not per run), e.g. weights re-laid for a kernel; one per (source, tag). -1 if source is not a
  // whole graph constant.
  int32_t derived_constant(int32_t source, const std::string& tag, DType dtype, const Shape& shape,
                           std::function<Array(const Array&)> derive);
  Operand operand(int32_t id) const;       // the address of the value's first element
  int64_t uses(const ir::Value& v) const;  // node inputs and graph outputs that read v

  // Buffers and steps.
  int32_t new_buffer(BufferKind kind, int32_t slot, int64_t bytes);
  int32_t scratch(int64_t bytes);  // arena memory for the next emitted step only
  void emit(std::unique_ptr<Step> step, const std::vector<int32_t>& read_values,
            const std::vector<int32_t>& written_values, const std::vector<int32_t>& scratch_buffers = {});
  // The written value may take over the read value's arena memory if that dies at this step. With
  // `reads` (all the step reads, `read` included), only when nothing else there shares that memory.
  void allow_in_place(int32_t written, int32_t read, const std::vector<int32_t>& reads = {});
  // Reserves per-run scratch memory for a step (shared by all steps: each uses it only while running).
  void need_step_scratch(int64_t bytes);

  void set_epilogues(std::unordered_map<const ir::Node*, Epilogue> e) { epilogues_ = std::move(e); }
  const Epilogue* epilogue(const ir::Node& head) const;
  // The cache writes a kv_cache_attention node takes over (cache_appends.h), or null.
  void set_cache_appends(CacheAppendMap a) { cache_appends_ = std::move(a); }
  const CacheAppend* cache_append(const ir::Node& attention) const;

  // Finishes the program: output bindings and final copies, liveness, memory plan; then verifies it
  // (program_verifier.h), throwing LoweringFault naming the step's node if it is unsound.
  std::unique_ptr<Program> finish();

 private:
  const ir::Graph& graph_;
  FusionSet fusion_;
  const StepFactory& steps_;
  const ir::Node* current_ = nullptr;
  std::vector<const ir::Node*> step_nodes_;  // per emitted step, the node it was emitted for
  std::unique_ptr<Program> program_;
  std::vector<ValueInfo> values_;
  std::unordered_map<ir::Value, int32_t, ir::ValueHash> ids_;
  std::unordered_map<int32_t, int32_t> packed_copies_;
  std::map<std::pair<int32_t, std::string>, int32_t> derived_constants_;
  std::unordered_map<ir::Value, int64_t, ir::ValueHash> uses_;
  std::vector<runtime::StepAccess> access_;
  std::vector<std::pair<int32_t, int32_t>> pending_same_memory_;  // allow_in_place pairs for the next step
  std::unordered_map<const ir::Node*, Epilogue> epilogues_;
  CacheAppendMap cache_appends_;
};

// A library lowering: emits steps for `node` and returns true, or returns false having emitted
// nothing (the node then runs on its reference kernel). `claims` says, before lowering, whether the
// lowering will take the node; `over_jit` makes a claimed node stay out of generated kernels.
// Ops whose nodes run as groups (every f32 adam_update of a graph in one pass) also set `group_key`
// (claimed nodes with equal keys share one step, made by `lower_group`); Fusion::adam_groups off, each
// claimed node is a group of one.
using LowerFn = bool (*)(Lowering& lowering, const ir::NodePtr& node);
using ClaimFn = bool (*)(const ir::Node& node);
using GroupKeyFn = std::string (*)(const ir::Node& node);
using LowerGroupFn = void (*)(Lowering& lowering, const std::vector<ir::NodePtr>& nodes);
struct LibraryLowering {
  LowerFn lower = nullptr;
  ClaimFn claims = nullptr;
  bool over_jit = true;
  GroupKeyFn group_key = nullptr;
  LowerGroupFn lower_group = nullptr;
};
using LoweringTable = std::unordered_map<std::string, LibraryLowering>;

}  // namespace tessera::backends::common
