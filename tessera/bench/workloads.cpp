// The table of workloads, gathered from the per-family files.
#include "tessera/bench/workloads.h"

#include "tessera/core/error.h"

namespace tessera::bench {

std::vector<Workload> model_workloads();
std::vector<Workload> kernel_workloads();
std::vector<Workload> gpu_workloads();
std::vector<Workload> gpu_llm_workloads();  // workloads_llm_gpu.cpp

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all = [] {
    std::vector<Workload> list;
    for (auto family : {&model_workloads, &kernel_workloads, &gpu_workloads, &gpu_llm_workloads}) {
      std::vector<Workload> part = family();
      list.insert(list.end(), part.begin(), part.end());
    }
    return list;
  }();
  return all;
}

const Workload& workload(const std::string& name) {
  std::string names;
  for (const Workload& w : workloads()) {
    if (w.name == name) return w;
    names += (names.empty() ? "" : ", ") + w.name;
  }
  fail("bench: unknown workload '{}' (known: {})", name, names);
}

}  // namespace tessera::bench
