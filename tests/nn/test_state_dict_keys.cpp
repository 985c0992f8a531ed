// load_state_dict's report of names that do not pair up (PyTorch's missing_keys / unexpected_keys), and
// strict-mode errors that say how the names differ: a prefix on one side, or a shape mismatch.
#include "nn_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

std::shared_ptr<nn::Sequential> two_layers(uint64_t seed) {
  ops::Generator gen(seed);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(3, 4, true, gen), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(4, 2, true, gen)});
}

StateDict with_prefix(const StateDict& state, const std::string& prefix) {
  StateDict out;
  for (const auto& [n, a] : state) out[prefix + n] = a;
  return out;
}

}  // namespace

TEST(StateDictKeys, MatchingLoadReportsNothing) {
  auto a = two_layers(1), b = two_layers(2);
  const nn::IncompatibleKeys keys = b->load_state_dict(a->state_dict());
  EXPECT_TRUE(keys.empty());
  for (const auto& [n, arr] : b->state_dict()) EXPECT_TRUE(bytes_equal(arr, a->state_dict().at(n))) << n;
}

TEST(StateDictKeys, NonStrictReturnsMissingAndUnexpectedSorted) {
  auto a = two_layers(3), b = two_layers(4);
  StateDict state = a->state_dict();
  state.erase("2.bias");
  state.erase("0.weight");
  state["3.weight"] = Array::zeros(DType::f32, {2});
  const nn::IncompatibleKeys keys = b->load_state_dict(state, /*strict=*/false);
  EXPECT_EQ(keys.missing_keys, (std::vector<std::string>{"0.weight", "2.bias"}));
  EXPECT_EQ(keys.unexpected_keys, (std::vector<std::string>{"3.weight"}));
  EXPECT_FALSE(keys.empty());
  // What matched was loaded.
  EXPECT_TRUE(bytes_equal(b->state_dict().at("2.weight"), a->state_dict().at("2.weight")));
}

TEST(StateDictKeys, StrictErrorNamesAPrefixTheStateDictAdds) {
  auto a = two_layers(5), b = two_layers(6);
  const StateDict prefixed = with_prefix(a->state_dict(), "model.");
  EXPECT_TESSERA_ERROR(b->load_state_dict(prefixed), "missing from the state dict: '0.bias' f32[4]", "unexpected",
                       "'model.0.bias' f32[4]", "4 of the state dict's names",
                       "prefix 'model.' (e.g. 'model.0.bias' for '0.bias')", "strip it");
  // Non-strict, nothing pairs up and nothing is loaded.
  const auto before = b->state_dict();
  const nn::IncompatibleKeys keys = b->load_state_dict(prefixed, false);
  EXPECT_EQ(keys.missing_keys.size(), 4u);
  EXPECT_EQ(keys.unexpected_keys.size(), 4u);
  for (const auto& [n, arr] : b->state_dict()) EXPECT_TRUE(bytes_equal(arr, before.at(n))) << n;
}

TEST(StateDictKeys, StrictErrorNamesAPrefixTheModuleAdds) {
  // A module that wraps the network as "net": its names are the bare state dict's with "net." in front.
  class Wrapper : public nn::Module {
   public:
    Wrapper() { net = register_module("net", two_layers(7)); }
    std::shared_ptr<nn::Sequential> net;
  };
  Wrapper w;
  auto bare = two_layers(8);
  EXPECT_TESSERA_ERROR(w.load_state_dict(bare->state_dict()), "4 of the module's names",
                       "prefix 'net.' (e.g. 'net.0.bias' for '0.bias')", "add it");
  EXPECT_TRUE(w.load_state_dict(with_prefix(bare->state_dict(), "net.")).empty());
}

TEST(StateDictKeys, UnrelatedNamesGetNoPrefixHint) {
  auto b = two_layers(9);
  const StateDict other{{"encoder.weight", Array::zeros(DType::f32, {2})}};
  try {
    b->load_state_dict(other);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("prefix"), std::string::npos) << e.what();
  }
  EXPECT_EQ(nn::explain_key_differences({{"a.weight"}, {"b.bias"}}), "");
}

TEST(StateDictKeys, LongListsAreCut) {
  auto b = two_layers(10);
  StateDict many;
  for (int i = 0; i < 9; ++i) many["extra" + std::to_string(i)] = Array::zeros(DType::f32, {1});
  EXPECT_TESSERA_ERROR(b->load_state_dict(many), "'extra4' f32[1] and 4 more", "'2.weight' f32[2, 4]");
}

TEST(StateDictKeys, ShapeMismatchNamesTheTensorAndBothShapesInBothModes) {
  auto a = two_layers(11), b = two_layers(12);
  StateDict state = a->state_dict();
  state["2.weight"] = Array::zeros(DType::f32, {4, 2});
  for (bool strict : {true, false}) {
    EXPECT_TESSERA_ERROR(b->load_state_dict(state, strict), "'2.weight'", "shape [4, 2] in the state dict",
                         "[2, 4] in the module");
  }
}

TEST(StateDictKeys, EveryMismatchIsListedInRegistrationOrder) {
  auto a = two_layers(13), b = two_layers(14);
  StateDict state = a->state_dict();
  state["2.bias"] = Array::zeros(DType::f32, {3});
  state["0.weight"] = Array::zeros(DType::i32, {4, 3});
  try {
    b->load_state_dict(state);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    const size_t first = m.find("'0.weight' is i32 in the state dict but f32 in the module");
    const size_t second = m.find("'2.bias' has shape [3] in the state dict but [2] in the module");
    ASSERT_NE(first, std::string::npos) << m;
    ASSERT_NE(second, std::string::npos) << m;
    EXPECT_LT(first, second) << m;
  }
}
