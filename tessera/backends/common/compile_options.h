#pragma once
// What a backend's compiler may do, each part switchable: the fusions ($TESSERA_FUSION) and the
// passes of the default pipeline ($TESSERA_PASSES); every backend reads the same settings. Switching
// one off works around a compiler bug (an internal compiler error names the switch to try), measures
// what a fusion is worth, and lets the graph fuzzer compile every graph with each part on and off.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/ir/graph.h"

namespace tessera::backends::common {

enum class Fusion : uint32_t {
  epilogue = 1u << 0,            // bias / activation / residual tails fused into a matmul or convolution
  transposed_product = 1u << 1,  // a matmul whose only use is a transpose computes the transpose directly
  clusters = 1u << 2,            // several fusable ops in one generated kernel (off: one op per kernel)
  adam_groups = 1u << 3,         // every adam_update of a graph in one pass over all parameters
  in_place = 1u << 4,            // a result takes over the memory of an input that dies at its step
  relayout = 1u << 5,            // constant quantized weights re-laid once for the x8 kernels
  row_kernels = 1u << 6,         // a reduction and its result's use over the row in one kernel (RMSNorm)
  depthwise_pointwise = 1u << 7,  // a depthwise conv (and the 1x1 expansion before it) band by band in the 1x1 after it
};

class FusionSet {
 public:
  static FusionSet all();
  static FusionSet none() { return FusionSet(0); }
  bool has(Fusion f) const { return (bits_ & static_cast<uint32_t>(f)) != 0; }
  FusionSet with(Fusion f) const { return FusionSet(bits_ | static_cast<uint32_t>(f)); }
  FusionSet without(Fusion f) const { return FusionSet(bits_ & ~static_cast<uint32_t>(f)); }
  uint32_t bits() const { return bits_; }
  bool operator==(const FusionSet& o) const { return bits_ == o.bits_; }
  std::string str() const;  // "all", "none" or the enabled names ("epilogue,clusters")

 private:
  explicit FusionSet(uint32_t bits) : bits_(bits) {}
  uint32_t bits_;
};

// Every fusion by name, in declaration order.
const std::vector<std::pair<std::string, Fusion>>& fusion_names();

// "1", "on", "all" or "": all fusions; "0", "off", "none": none; "epilogue,clusters": only those;
// "-epilogue,-in_place": all but those. Throws naming an unknown entry and the known names.
FusionSet parse_fusion(std::string_view text);

// The passes of the default pipeline to leave out: "0"/"off" leaves out all, "-cse,-dce" those named,
// "" or "1" none. Throws naming an unknown pass and the known ones.
struct PassSelection {
  bool all_off = false;
  std::vector<std::string> disabled;
  std::string str() const;
};
PassSelection parse_passes(std::string_view text);

// The default pipeline without the passes `selection` leaves out, run on `graph`. A pass that throws is
// an internal compiler error of `backend` (backends/internal_error.h) naming the switch that avoids it.
ir::Graph run_selected_passes(const ir::Graph& graph, const PassSelection& selection, const std::string& backend);

struct CompileOptions {
  FusionSet fusion = FusionSet::all();
  PassSelection passes;
};

// The options compile() uses; they start from $TESSERA_FUSION and $TESSERA_PASSES (an invalid value is
// reported once on stderr and ignored) and change with set_compile_options. Plans are cached per options.
CompileOptions compile_options();
void set_compile_options(const CompileOptions& options);

// The GPU backends choose their fusions themselves, but follow the options' row_kernels switch, so
// that TESSERA_FUSION=-row_kernels times a device's norms and softmaxes without row kernels.
FusionSet following_row_kernel_switch(FusionSet backend_choice);

// Sets the options for a scope (tests, the graph fuzzer).
class ScopedCompileOptions {
 public:
  explicit ScopedCompileOptions(const CompileOptions& options) : saved_(compile_options()) {
    set_compile_options(options);
  }
  ~ScopedCompileOptions() { set_compile_options(saved_); }
  ScopedCompileOptions(const ScopedCompileOptions&) = delete;
  ScopedCompileOptions& operator=(const ScopedCompileOptions&) = delete;

 private:
  CompileOptions saved_;
};

}  // namespace tessera::backends::common
