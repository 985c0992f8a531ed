// Module mechanics: parameter/buffer naming for nested modules, train/eval propagation, dtype casts,
// state_dict round trips and their errors, and a custom module written the way users write theirs.
#include "nn_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// A user-defined module: own parameter, an integer buffer, and nested children (a Sequential and a
// BatchNorm) so that names are at least three levels deep.
class Net : public nn::Module {
 public:
  explicit Net(ops::Generator& gen) {
    scale = Tensor::from_vector<float>({1.5f}, {1});
    register_parameter("scale", &scale);
    calls = Tensor::from_vector<int64_t>({0}, {1});
    register_buffer("calls", &calls);
    body = register_module(
        "body", std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
                    std::make_shared<nn::Linear>(3, 4, true, gen), std::make_shared<nn::ReLU>(),
                    std::make_shared<nn::Dropout>(0.5, gen), std::make_shared<nn::Linear>(4, 2, true, gen)}));
    norm = register_module("norm", std::make_shared<nn::BatchNorm1d>(2));
  }
  Tensor forward(const Tensor& x) override {
    calls = calls + Tensor::from_vector<int64_t>({1}, {1});
    return (*norm)((*body)(x)) * scale;
  }
  std::string name() const override { return "Net"; }

  Tensor scale, calls;
  std::shared_ptr<nn::Sequential> body;
  std::shared_ptr<nn::BatchNorm1d> norm;
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor*>>& named) {
  std::vector<std::string> out;
  for (const auto& [n, t] : named) out.push_back(n);
  return out;
}

}  // namespace

TEST(Module, SequentialParameterNamesAreDottedAndOrdered) {
  ops::Generator gen(1);
  nn::Sequential seq({std::make_shared<nn::Linear>(3, 4, true, gen), std::make_shared<nn::ReLU>(),
                      std::make_shared<nn::Linear>(4, 2, false, gen)});
  EXPECT_EQ(names_of(seq.named_parameters()), (std::vector<std::string>{"0.weight", "0.bias", "2.weight"}));
  const auto params = seq.parameters();
  ASSERT_EQ(params.size(), 3u);
  auto& first = static_cast<nn::Linear&>(seq[0]);
  EXPECT_EQ(params[0], &first.weight);
  EXPECT_EQ(params[1], &first.bias);
  EXPECT_EQ(seq.num_parameters(), 3 * 4 + 4 + 4 * 2);
  for (Tensor* p : params) EXPECT_TRUE(p->requires_grad());
}

TEST(Module, NestedNamesAndBuffers) {
  ops::Generator gen(2);
  Net net(gen);
  EXPECT_EQ(names_of(net.named_parameters()),
            (std::vector<std::string>{"scale", "body.0.weight", "body.0.bias", "body.3.weight", "body.3.bias",
                                      "norm.weight", "norm.bias"}));
  EXPECT_EQ(names_of(net.named_buffers()),
            (std::vector<std::string>{"calls", "norm.running_mean", "norm.running_var"}));
  const auto children = net.named_children();
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].first, "body");
  EXPECT_EQ(children[0].second, net.body.get());
  EXPECT_EQ(children[1].first, "norm");
  EXPECT_EQ(net.num_parameters(), 1 + 12 + 4 + 8 + 2 + 2 + 2);
  // Buffers are not parameters: they do not require gradients.
  EXPECT_FALSE(net.norm->running_mean.requires_grad());
}

TEST(Module, SummaryListsModulesAndParameterTypes) {
  ops::Generator gen(3);
  Net net(gen);
  const std::string s = net.summary();
  for (const char* piece : {"Net", "scale f32[1]", "body: Sequential", "0: Linear(3, 4)", "weight f32[4, 3]",
                            "3: Linear(4, 2)", "norm: BatchNorm(2)", "2: Dropout(p=0.5)"}) {
    EXPECT_NE(s.find(piece), std::string::npos) << "'" << piece << "' missing from\n" << s;
  }
}

TEST(Module, TrainAndEvalReachEveryDescendant) {
  ops::Generator gen(4);
  Net net(gen);
  std::vector<nn::Module*> all{&net, net.body.get(), net.norm.get()};
  for (size_t i = 0; i < net.body->size(); ++i) all.push_back(&(*net.body)[i]);
  for (nn::Module* m : all) EXPECT_TRUE(m->is_training()) << m->name();
  net.eval();
  for (nn::Module* m : all) EXPECT_FALSE(m->is_training()) << m->name();
  // In eval mode dropout is the identity and batch norm uses running statistics: deterministic.
  const Tensor x = random_tensor({4, 3}, 51);
  EXPECT_EQ(values(net(x)), values(net(x)));
  net.train();
  for (nn::Module* m : all) EXPECT_TRUE(m->is_training()) << m->name();
  net.train(false);
  EXPECT_FALSE(net.body->is_training());
}

TEST(Module, ToCastsFloatingParametersAndBuffers) {
  ops::Generator gen(5);
  Net net(gen);
  const std::map<std::string, Array> before = net.state_dict();
  net.to(DType::f64);
  for (const auto& [n, p] : net.named_parameters()) {
    EXPECT_EQ(p->dtype(), DType::f64) << n;
    EXPECT_TRUE(p->requires_grad()) << n;
    EXPECT_TRUE(p->value().node()->is_leaf()) << n;
    EXPECT_EQ(values(*p), before.at(n).to_f64()) << n;  // f32 -> f64 is exact
  }
  EXPECT_EQ(net.norm->running_var.dtype(), DType::f64);
  EXPECT_EQ(net.calls.dtype(), DType::i64);  // integer buffers keep their dtype
  const Tensor y = net(random_tensor({4, 3}, 52, DType::f64));
  EXPECT_EQ(y.dtype(), DType::f64);
  // Gradients flow to the cast parameters.
  ops::sum(y).backward();
  EXPECT_TRUE(net.scale.grad().defined());
  EXPECT_EQ(net.scale.grad().dtype(), DType::f64);
  EXPECT_TESSERA_ERROR(net.to(DType::i32), "Module::to", "i32");
}

TEST(Module, StateDictRoundTripReproducesTheModel) {
  ops::Generator g1(6), g2(7);
  Net a(g1), b(g2);
  a.eval();
  b.eval();
  const Tensor x = random_tensor({5, 3}, 53);
  ASSERT_NE(values(a(x)), values(b(x)));
  const std::map<std::string, Array> state = a.state_dict();
  EXPECT_EQ(state.size(), 10u);  // 7 parameters + 3 buffers
  b.load_state_dict(state);
  for (const auto& [n, arr] : b.state_dict()) EXPECT_TRUE(bytes_equal(arr, state.at(n))) << n;
  EXPECT_EQ(values(a(x)), values(b(x)));
  // Loaded parameters are fresh leaves that train.
  for (const auto& [n, p] : b.named_parameters()) EXPECT_TRUE(p->requires_grad()) << n;
  ops::sum(b(x)).backward();
  EXPECT_TRUE(b.body->named_parameters()[0].second->grad().defined());
  // Updating the loaded model (a new value swapped in, as optimisers do) leaves the saved state alone.
  b.scale = b.scale * 2.0;
  nn::materialize(b);
  EXPECT_EQ(state.at("scale").to_f64(), (std::vector<double>{1.5}));
}

TEST(Module, StateDictHoldsEvaluatedLazyValues) {
  ops::Generator gen(8);
  nn::Linear fc(2, 2, true, gen);
  fc.weight = fc.weight * 0.0 + 3.0;  // a lazy, unevaluated value
  const auto state = fc.state_dict();
  EXPECT_EQ(state.at("weight").to_f64(), (std::vector<double>{3, 3, 3, 3}));
}

TEST(Module, LoadStateDictErrorsNameTheTensorAndShapes) {
  ops::Generator g1(9), g2(10);
  Net a(g1), b(g2);
  const std::map<std::string, Array> good = a.state_dict();

  std::map<std::string, Array> missing = good;
  missing.erase("body.3.weight");
  EXPECT_TESSERA_ERROR(b.load_state_dict(missing), "load_state_dict",
                       "missing from the state dict: 'body.3.weight' f32[2, 4]");

  std::map<std::string, Array> extra = good;
  extra["body.9.weight"] = Array::zeros(DType::f32, {2, 2});
  EXPECT_TESSERA_ERROR(b.load_state_dict(extra), "load_state_dict", "unexpected", "'body.9.weight' f32[2, 2]");

  std::map<std::string, Array> misshaped = good;
  misshaped["body.0.weight"] = Array::zeros(DType::f32, {3, 4});
  EXPECT_TESSERA_ERROR(b.load_state_dict(misshaped), "load_state_dict", "'body.0.weight'", "[3, 4]", "[4, 3]");

  std::map<std::string, Array> wrong_kind = good;
  wrong_kind["norm.bias"] = Array::zeros(DType::i32, {2});
  EXPECT_TESSERA_ERROR(b.load_state_dict(wrong_kind), "load_state_dict", "'norm.bias'", "i32", "f32");
}

TEST(Module, FailedLoadLeavesTheModelUnchanged) {
  ops::Generator g1(11), g2(12);
  Net a(g1), b(g2);
  const std::map<std::string, Array> before = b.state_dict();
  std::map<std::string, Array> state = a.state_dict();
  state["norm.weight"] = Array::zeros(DType::f32, {3});  // the last parameter is mis-shaped
  EXPECT_THROW(b.load_state_dict(state), Error);
  for (const auto& [n, arr] : b.state_dict()) EXPECT_TRUE(bytes_equal(arr, before.at(n))) << n << " was modified";
}

TEST(Module, NonStrictLoadSkipsMissingAndExtraButNotMisshaped) {
  ops::Generator g1(13), g2(14);
  Net a(g1), b(g2);
  const std::map<std::string, Array> b_before = b.state_dict();
  std::map<std::string, Array> partial{{"scale", Array::full(DType::f32, {1}, 4.0)},
                                       {"unknown", Array::zeros(DType::f32, {7})}};
  const nn::IncompatibleKeys keys = b.load_state_dict(partial, false);
  EXPECT_EQ(keys.unexpected_keys, (std::vector<std::string>{"unknown"}));
  EXPECT_EQ(keys.missing_keys.size(), b.state_dict().size() - 1);  // all but "scale"
  EXPECT_EQ(values(b.scale), (std::vector<double>{4.0}));
  EXPECT_TRUE(bytes_equal(b.state_dict().at("body.0.weight"), b_before.at("body.0.weight")));
  partial["body.0.bias"] = Array::zeros(DType::f32, {5});
  EXPECT_TESSERA_ERROR(b.load_state_dict(partial, false), "'body.0.bias'", "[5]", "[4]");
}

TEST(Module, LoadCastsBetweenFloatingDtypes) {
  ops::Generator gen(15);
  nn::Linear fc(2, 3, true, gen);
  std::map<std::string, Array> state{{"weight", Array::full(DType::f64, {3, 2}, 0.25)},
                                     {"bias", Array::full(DType::f16, {3}, -1.0)}};
  fc.load_state_dict(state);
  EXPECT_EQ(fc.weight.dtype(), DType::f32);
  EXPECT_EQ(fc.bias.dtype(), DType::f32);
  EXPECT_EQ(values(fc.bias), (std::vector<double>{-1, -1, -1}));
}

TEST(Module, ZeroGradClearsEveryGradient) {
  ops::Generator gen(16);
  Net net(gen);
  ops::sum(net(random_tensor({4, 3}, 54))).backward();
  for (const auto& [n, p] : net.named_parameters()) EXPECT_TRUE(p->grad().defined()) << n;
  net.zero_grad();
  for (const auto& [n, p] : net.named_parameters()) EXPECT_FALSE(p->grad().defined()) << n;
}

TEST(Module, MaterializeCutsHistoryAndKeepsValues) {
  ops::Generator gen(17);
  nn::Linear fc(2, 2, true, gen);
  const std::vector<double> w = values(fc.weight);
  fc.weight = fc.weight * 2.0;
  EXPECT_FALSE(fc.weight.value().node()->is_leaf());
  nn::materialize(fc);
  EXPECT_TRUE(fc.weight.value().node()->is_leaf());
  EXPECT_TRUE(fc.weight.requires_grad());
  const std::vector<double> w2 = values(fc.weight);
  for (size_t i = 0; i < w.size(); ++i) EXPECT_FLOAT_EQ(w2[i], 2.0 * w[i]);
}

TEST(Module, RequiresGradToggles) {
  ops::Generator gen(18);
  nn::Linear fc(2, 2, true, gen);
  fc.requires_grad(false);
  for (Tensor* p : fc.parameters()) EXPECT_FALSE(p->requires_grad());
  fc.requires_grad(true);
  for (Tensor* p : fc.parameters()) EXPECT_TRUE(p->requires_grad());
}

namespace {
class Broken : public nn::Module {
 public:
  Broken() {
    a = Tensor::from_vector<float>({1}, {1});
    register_parameter("a", &a);
  }
  void register_again() { register_parameter("a", &a); }
  void register_undefined() { register_parameter("b", &b); }
  void register_child_twice() {
    add_child("c", std::make_shared<nn::Flatten>());
    add_child("c", std::make_shared<nn::Flatten>());
  }
  void register_null_child() { add_child("d", nullptr); }
  std::string name() const override { return "Broken"; }
  Tensor a, b;
};
}  // namespace

TEST(Module, RegistrationErrors) {
  Broken m;
  EXPECT_TESSERA_ERROR(m.register_again(), "Broken", "'a'", "twice");
  EXPECT_TESSERA_ERROR(m.register_undefined(), "Broken", "'b'", "undefined");
  EXPECT_TESSERA_ERROR(m.register_child_twice(), "Broken", "'c'", "twice");
  EXPECT_TESSERA_ERROR(m.register_null_child(), "Broken", "'d'", "null");
  // A module without a single-input forward says so.
  EXPECT_TESSERA_ERROR(m(Tensor::from_vector<float>({1}, {1})), "Broken", "forward");
}

TEST(Module, CustomModuleTrainsEndToEnd) {
  ops::Generator gen(19);
  Net net(gen);
  const Tensor x = random_tensor({8, 3}, 55);
  const Tensor y = net(x);
  expect_shape(y, {8, 2});
  ops::sum(ops::square(y)).backward();
  for (const auto& [n, p] : net.named_parameters()) {
    ASSERT_TRUE(p->grad().defined()) << n;
    expect_shape(p->grad(), p->shape());
  }
  // The module's own forward updated its integer buffer lazily; materialize evaluates it.
  nn::materialize(net);
  EXPECT_EQ(net.calls.to_vector<int64_t>(), (std::vector<int64_t>{1}));
}
