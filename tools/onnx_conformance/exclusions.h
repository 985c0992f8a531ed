#pragma once
// The conformance suite's exclusion list: one entry per line, "<suite>/<test>: <reason>", where the
// test name may end in '*' to cover every test it begins (node/test_sequence_*: ...). '#' starts a
// comment line. Every entry must give a reason.
#include <string>
#include <vector>

namespace tessera::onnx_conformance {

struct Exclusion {
  std::string pattern;  // "node/test_bitshift_*"
  std::string reason;
  int line = 0;
  mutable int matched = 0;
};

class ExclusionList {
 public:
  static ExclusionList load(const std::string& path);
  // The entry covering `test` ("node/test_abs"), or null.
  const Exclusion* find(const std::string& test) const;
  const std::vector<Exclusion>& entries() const { return entries_; }

 private:
  std::vector<Exclusion> entries_;
};

}  // namespace tessera::onnx_conformance
