// The ONNX conformance driver: runs every test of the given suites of ONNX's backend test data
// (Debian's libonnx-testdata: node, pytorch-converted, pytorch-operator, simple) through the importer
// on each backend and compares with the expected outputs. Tests in the exclusion list are not run and
// count as failures in the pass rate; any other test that does not pass fails the run, and so does an
// exclusion that no longer matches a test (the list stays honest).
//
//   onnx_conformance --data /usr/share/libonnx-testdata/data --exclusions tools/onnx_conformance/exclusions.txt
//                    [--suite node ...] [--backend reference --backend cpu] [--filter SUBSTRING] [--verbose]
//                    [--check-exclusions]   (runs the excluded tests too: one that passes is a stale entry)
// A named backend that is not available here (no GPU, no Vulkan driver) skips the run: exit code 77.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tools/onnx_conformance/exclusions.h"
#include "tools/onnx_conformance/test_case.h"

namespace fs = std::filesystem;
using namespace tessera::onnx_conformance;

namespace {

struct Options {
  std::string data = "/usr/share/libonnx-testdata/data";
  std::string exclusions;
  std::vector<std::string> suites;
  std::vector<std::string> backends;
  std::string filter;
  bool verbose = false;
  bool check_exclusions = false;  // also run excluded tests; one that passes is a stale entry
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      TESSERA_CHECK(i + 1 < argc, "{} needs a value", a);
      return argv[++i];
    };
    if (a == "--data") o.data = value();
    else if (a == "--exclusions") o.exclusions = value();
    else if (a == "--suite") o.suites.push_back(value());
    else if (a == "--backend") o.backends.push_back(value());
    else if (a == "--filter") o.filter = value();
    else if (a == "--verbose") o.verbose = true;
    else if (a == "--check-exclusions") o.check_exclusions = true;
    else tessera::fail("unknown argument {}; see the comment at the top of tools/onnx_conformance/main.cpp", a);
  }
  if (o.suites.empty()) o.suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  if (o.backends.empty()) o.backends = {"reference", "cpu"};
  TESSERA_CHECK(!o.exclusions.empty(), "--exclusions FILE is required");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    for (const std::string& name : o.backends) {
      const tessera::backends::Backend* b = tessera::backends::find_backend(name);
      TESSERA_CHECK(b != nullptr, "--backend {}: no such backend", name);
      if (!b->available()) {
        fmt::print("onnx_conformance: skipped, backend {} is not available here: {}\n", name, b->status());
        return 77;
      }
    }
    const ExclusionList exclusions = ExclusionList::load(o.exclusions);
    const auto start = std::chrono::steady_clock::now();
    int passed = 0, failed = 0, excluded = 0, stale = 0;
    int float_node_tests = 0, float_node_passed = 0;  // issue 16's target: >= 95% of these pass
    for (const std::string& suite : o.suites) {
      const fs::path root = fs::path(o.data) / suite;
      TESSERA_CHECK(fs::is_directory(root), "{} is not a folder (install libonnx-testdata)", root.string());
      std::vector<fs::path> tests;
      for (const auto& e : fs::directory_iterator(root)) {
        if (e.is_directory()) tests.push_back(e.path());
      }
      std::sort(tests.begin(), tests.end());
      for (const fs::path& test : tests) {
        const std::string name = suite + "/" + test.filename().string();
        if (!o.filter.empty() && name.find(o.filter) == std::string::npos) continue;
        const bool float_node = suite == "node" && is_float_test(test.string());
        float_node_tests += float_node;
        if (const Exclusion* ex = exclusions.find(name)) {
          ++excluded;
          if (o.verbose) fmt::print("EXCLUDED {}: {}\n", name, ex->reason);
          if (o.check_exclusions && run_test_case(test.string(), o.backends, Tolerance{}).passed) {
            ++stale;
            fmt::print("STALE exclusion (line {}) {} passes now\n", ex->line, name);
          }
          continue;
        }
        const CaseResult r = run_test_case(test.string(), o.backends, Tolerance{});
        if (r.passed) {
          ++passed;
          float_node_passed += float_node;
          if (o.verbose) fmt::print("PASS {}\n", name);
        } else {
          ++failed;
          fmt::print("FAIL {}: {}\n", name, r.message);
        }
      }
    }
    if (o.filter.empty()) {
      for (const Exclusion& e : exclusions.entries()) {
        if (e.matched == 0) {
          ++stale;
          fmt::print("STALE exclusion (line {}) {} matches no test\n", e.line, e.pattern);
        }
      }
    }
    const int total = passed + failed + excluded;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} passed, {} failed, {} excluded of {} tests; pass rate {:.1f}% (excluded count as failures); {:.1f} s\n",
               passed, failed, excluded, total, total == 0 ? 0.0 : 100.0 * passed / total, seconds);
    if (float_node_tests > 0) {
      fmt::print("float node tests (every input and output a float tensor): {} of {} pass, {:.1f}% (excluded count as "
                 "failures)\n",
                 float_node_passed, float_node_tests, 100.0 * float_node_passed / float_node_tests);
    }
    return failed == 0 && stale == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "onnx_conformance: " << e.what() << "\n";
    return 2;
  }
}
