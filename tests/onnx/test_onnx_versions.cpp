// The translation table's version lists against ONNX's own operator schemas (libonnx's registry): an
// op's versions must be exactly the spec's since_versions up to the newest opset the importer knows,
// or a model's opset could select semantics the translation does not implement. Debian's libonnx
// (1.12) knows opsets up to 17; opset 18's changes are listed here from ONNX 1.13's changelog.
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include "tessera/io/onnx/translation_table.h"

namespace tessera::test {
namespace {

// Every default-domain operator that gained a version in opset 18 (new or changed).
const std::set<std::string> kOpset18 = {
    "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "CenterCropPad", "Col2Im", "GroupNormalization",
    "LpPool", "Mish", "OptionalGetElement", "OptionalHasElement", "Pad", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare", "Resize",
    "ScatterElements", "ScatterND", "Split"};

std::vector<int64_t> spec_versions(const std::string& op) {
  static_assert(io::onnx::kNewestOpset == 18, "list the newer opsets' changes in this test");
  std::vector<int64_t> out;
  for (int v = 17; v >= 1;) {
    const ::onnx::OpSchema* schema = ::onnx::OpSchemaRegistry::Schema(op, v, "");
    if (schema == nullptr) break;
    out.insert(out.begin(), schema->since_version());
    v = schema->since_version() - 1;
  }
  if (kOpset18.count(op) != 0) out.push_back(18);
  return out;
}

TEST(OnnxVersions, EveryTranslationListsTheSpecsVersions) {
  const auto& table = io::onnx::translations();
  EXPECT_GE(table.names().size(), 120u);
  for (const std::string& op : table.names()) {
    const io::onnx::OpTranslation* entry = table.find(op);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->versions, spec_versions(op)) << op;
    EXPECT_GE(entry->oldest_supported, entry->versions.front()) << op;
    EXPECT_LE(entry->oldest_supported, entry->versions.back()) << op;
  }
}

}  // namespace
}  // namespace tessera::test
