#pragma once
// Entries by op name, one per op: what the StableHLO and ONNX exporters lower each Tessera op with, and
// what the ONNX importer translates each ONNX operator with. Registering a name twice is a bug in the
// table, reported naming the table and the op.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/core/error.h"

namespace tessera::io {

template <class Entry>
class OpTable {
 public:
  // `what` names the table in errors ("onnx export", ...).
  explicit OpTable(std::string what) : what_(std::move(what)) {}

  void add(const std::string& op, Entry entry) {
    TESSERA_CHECK(entries_.emplace(op, std::move(entry)).second, "{}: op '{}' is registered twice", what_, op);
  }
  const Entry* find(const std::string& op) const {
    auto it = entries_.find(op);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // The registered names, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const auto& [name, entry] : entries_) out.push_back(name);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string what_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace tessera::io
