// Domain coalescing: drops axes of extent 1 and merges neighbouring axes that every access walks
// as one (outer coefficient = inner coefficient * inner extent), so that a same-shape elementwise
// chain of any rank becomes one flat loop and a bias add becomes rows x columns.
#include <vector>

#include "tessera/core/error.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::lower {

void coalesce_domain(Kernel& kernel) {
  std::vector<Affine*> accesses;
  auto collect = [&](std::vector<Instr>& code) {
    for (Instr& in : code) {
      if (has_access(in.op)) accesses.push_back(&in.access);
    }
  };
  collect(kernel.body);
  collect(kernel.epilogue);
  for (auto& walk : kernel.chained) collect(walk);
  collect(kernel.row);
  for (Store& s : kernel.body_stores) accesses.push_back(&s.access);
  for (Store& s : kernel.epilogue_stores) accesses.push_back(&s.access);
  for (Store& s : kernel.row_stores) accesses.push_back(&s.access);

  for (const Affine* a : accesses) {
    TESSERA_CHECK(a->coef.size() == kernel.domain.size(), "loop IR: an access of rank {} in a domain of rank {}",
                  a->coef.size(), kernel.domain.size());
  }
  struct Axis {
    int64_t extent;
    bool reduced;
    std::vector<int64_t> coef;  // one per access
  };
  std::vector<Axis> axes;
  for (size_t d = 0; d < kernel.domain.size(); ++d) {
    if (kernel.domain[d] == 1) continue;
    Axis a{kernel.domain[d], static_cast<bool>(kernel.reduced[d]), {}};
    for (const Affine* acc : accesses) a.coef.push_back(acc->coef[d]);
    if (!axes.empty()) {
      Axis& p = axes.back();
      bool merge = p.reduced == a.reduced;
      for (size_t i = 0; merge && i < accesses.size(); ++i) merge = p.coef[i] == a.coef[i] * a.extent;
      if (merge) {
        p.extent *= a.extent;
        p.coef = a.coef;
        continue;
      }
    }
    axes.push_back(std::move(a));
  }
  if (axes.empty()) axes.push_back(Axis{1, false, std::vector<int64_t>(accesses.size(), 0)});
  kernel.domain.clear();
  kernel.reduced.clear();
  for (const Axis& a : axes) {
    kernel.domain.push_back(a.extent);
    kernel.reduced.push_back(a.reduced);
  }
  for (size_t i = 0; i < accesses.size(); ++i) {
    accesses[i]->coef.clear();
    for (const Axis& a : axes) accesses[i]->coef.push_back(a.coef[i]);
  }
}

}  // namespace tessera::lower
