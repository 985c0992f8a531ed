#pragma once
// The table of documentation blocks: each generated translation unit adds its blocks by name
// ("README.md:30") at static initialisation; tools/doc_blocks/main.cpp runs them.
#include <map>
#include <string>

namespace doc_blocks {

using BlockMain = int (*)();

std::map<std::string, BlockMain>& registry();

inline bool add(const std::string& name, BlockMain block) {
  registry().emplace(name, block);
  return true;
}

}  // namespace doc_blocks
