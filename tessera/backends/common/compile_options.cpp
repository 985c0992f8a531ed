#include "tessera/backends/common/compile_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "tessera/backends/internal_error.h"
#include "tessera/core/error.h"
#include "tessera/passes/pass.h"

namespace tessera::backends::common {
namespace {

std::vector<std::string_view> split_list(std::string_view text) {
  std::vector<std::string_view> items;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

bool is_one_of(std::string_view text, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), text) != words.end();
}

std::string known_fusions() {
  std::string names;
  for (const auto& [name, f] : fusion_names()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

std::vector<std::string> pipeline_pass_names() {
  std::vector<std::string> names;
  for (const passes::Pass& p : passes::default_pipeline().passes()) names.push_back(p.name);
  return names;
}

template <class Parse>
auto from_env(const char* var, Parse parse) -> decltype(parse(std::string_view())) {
  const char* env = std::getenv(var);
  if (env == nullptr) return parse(std::string_view());
  try {
    return parse(std::string_view(env));
  } catch (const Error& e) {
    std::fprintf(stderr, "tessera: ignoring %s: %s\n", var, e.what());
    return parse(std::string_view());
  }
}

struct OptionsSlot {
  std::mutex mutex;
  CompileOptions options{from_env("TESSERA_FUSION", parse_fusion), from_env("TESSERA_PASSES", parse_passes)};
};

OptionsSlot& slot() {
  static OptionsSlot s;
  return s;
}

}  // namespace

FusionSet following_row_kernel_switch(FusionSet backend_choice) {
  return compile_options().fusion.has(Fusion::row_kernels) ? backend_choice
                                                            : backend_choice.without(Fusion::row_kernels);
}

FusionSet FusionSet::all() {
  uint32_t bits = 0;
  for (const auto& [name, f] : fusion_names()) bits |= static_cast<uint32_t>(f);
  return FusionSet(bits);
}

std::string FusionSet::str() const {
  if (*this == all()) return "all";
  if (bits_ == 0) return "none";
  std::string out;
  for (const auto& [name, f] : fusion_names()) {
    if (has(f)) out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

const std::vector<std::pair<std::string, Fusion>>& fusion_names() {
  static const std::vector<std::pair<std::string, Fusion>> names{
      {"epilogue", Fusion::epilogue}, {"transposed_product", Fusion::transposed_product},
      {"clusters", Fusion::clusters}, {"adam_groups", Fusion::adam_groups},
      {"in_place", Fusion::in_place}, {"relayout", Fusion::relayout},
      {"row_kernels", Fusion::row_kernels},
      {"depthwise_pointwise", Fusion::depthwise_pointwise},
  };
  return names;
}

FusionSet parse_fusion(std::string_view text) {
  if (is_one_of(text, {"", "1", "on", "all"})) return FusionSet::all();
  if (is_one_of(text, {"0", "off", "none"})) return FusionSet::none();
  const std::vector<std::string_view> items = split_list(text);
  const bool subtract = !items.empty() && items.front().front() == '-';
  FusionSet set = subtract ? FusionSet::all() : FusionSet::none();
  for (std::string_view item : items) {
    const bool minus = item.front() == '-';
    TESSERA_CHECK(minus == subtract,
                  "TESSERA_FUSION='{}': either list the fusions to keep or, each with '-', the "
                  "ones to drop, not both",
                  text);
    if (minus) item.remove_prefix(1);
    auto it = std::find_if(fusion_names().begin(), fusion_names().end(),
                           [&](const auto& entry) { return entry.first == item; });
    TESSERA_CHECK(it != fusion_names().end(), "TESSERA_FUSION: unknown fusion '{}' (known: {}; or 0 / 1)", item,
                  known_fusions());
    set = minus ? set.without(it->second) : set.with(it->second);
  }
  return set;
}

std::string PassSelection::str() const {
  if (all_off) return "off";
  if (disabled.empty()) return "all";
  std::string out;
  for (const std::string& p : disabled) out += (out.empty() ? "-" : ",-") + p;
  return out;
}

PassSelection parse_passes(std::string_view text) {
  PassSelection selection;
  if (is_one_of(text, {"", "1", "on", "all"})) return selection;
  if (is_one_of(text, {"0", "off", "none"})) {
    selection.all_off = true;
    return selection;
  }
  const std::vector<std::string> known = pipeline_pass_names();
  for (std::string_view item : split_list(text)) {
    TESSERA_CHECK(item.front() == '-',
                  "TESSERA_PASSES: '{}' must name a pass to leave out with '-' (e.g. -cse), "
                  "or be 0 / 1",
                  item);
    item.remove_prefix(1);
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      std::string names;
      for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
      fail("TESSERA_PASSES: unknown pass '{}' (the default pipeline has: {})", item, names);
    }
    selection.disabled.emplace_back(item);
  }
  return selection;
}

ir::Graph run_selected_passes(const ir::Graph& graph, const PassSelection& selection, const std::string& backend) {
  if (selection.all_off) return graph;
  const passes::Pipeline& all = passes::default_pipeline();
  passes::Pipeline chosen;
  for (const passes::Pass& pass : all.passes()) {
    if (std::find(selection.disabled.begin(), selection.disabled.end(), pass.name) == selection.disabled.end()) {
      chosen.add(pass);
    }
  }
  chosen.repeat(all.max_rounds());
  try {
    return chosen.run(graph);
  } catch (const std::exception& e) {
    raise_internal_error({backend, fmt::format("the pass pipeline failed: {}", e.what()), &graph, nullptr, nullptr,
                          "TESSERA_PASSES=0 (or -NAME for the pass named above)"});
  }
}

CompileOptions compile_options() {
  OptionsSlot& s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.options;
}

void set_compile_options(const CompileOptions& options) {
  OptionsSlot& s = slot();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.options = options;
}

}  // namespace tessera::backends::common
