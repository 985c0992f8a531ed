// Runs the C++ blocks of the documentation (tools/doc_blocks/extract.py): `doc_blocks NAME` runs one
// block, `doc_blocks` all of them, `doc_blocks --list` names them. A block fails by returning non-zero
// or throwing; the exit status is 1 if any block failed.
#include <cstdio>
#include <cstring>
#include <exception>

#include "doc_blocks/registry.h"

namespace doc_blocks {
std::map<std::string, BlockMain>& registry() {
  static std::map<std::string, BlockMain> blocks;
  return blocks;
}
}  // namespace doc_blocks

namespace {
bool run(const std::string& name, doc_blocks::BlockMain block) {
  try {
    const int status = block();
    if (status == 0) return true;
    std::fprintf(stderr, "%s: returned %d\n", name.c_str(), status);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: threw: %s\n", name.c_str(), e.what());
  }
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  const auto& blocks = doc_blocks::registry();
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const auto& [name, block] : blocks) std::printf("%s\n", name.c_str());
    return 0;
  }
  bool ok = true;
  if (argc == 1) {
    for (const auto& [name, block] : blocks) ok = run(name, block) && ok;
    return ok ? 0 : 1;
  }
  for (int i = 1; i < argc; ++i) {
    auto it = blocks.find(argv[i]);
    if (it == blocks.end()) {
      std::fprintf(stderr, "doc_blocks: no block named '%s' (--list names them)\n", argv[i]);
      ok = false;
      continue;
    }
    ok = run(it->first, it->second) && ok;
  }
  return ok ? 0 : 1;
}
