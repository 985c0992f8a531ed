// The backend contract: arrays on devices, declared input/output aliasing, per-node supports(), the
// decomposition pass and the graph splitter. A fake device (host memory that the library must treat as
// device memory) and a backend on it that runs only some ops stand in for a GPU.
#include <cstdlib>
#include <cstring>

#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/backends/split.h"
#include "tessera/passes/decompose.h"
#include "test_util.h"

namespace tessera::test {
namespace {

// Memory that is not the host's as far as Array is concerned; copies count their bytes.
class FakeDevice final : public Device {
 public:
  DeviceType type() const override { return DeviceType::vulkan; }
  int index() const override { return 7; }
  void* allocate(size_t bytes) override {
    in_use += static_cast<int64_t>(bytes);
    return std::malloc(std::max<size_t>(bytes, 1));
  }
  void deallocate(void* p, size_t bytes) noexcept override {
    in_use -= static_cast<int64_t>(bytes);
    std::free(p);
  }
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    uploaded += static_cast<int64_t>(bytes);
    std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    downloaded += static_cast<int64_t>(bytes);
    std::memcpy(dst, src, bytes);
  }
  void copy_within(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
  void synchronize() override {}
  int64_t in_use = 0, uploaded = 0, downloaded = 0;
};

FakeDevice& fake_device() {
  static FakeDevice d;
  return d;
}

// Runs what it supports on the fake device (by way of the reference kernels on host copies): every op
// but the ones named in `lacks`.
class FakeBackend final : public backends::Backend {
 public:
  explicit FakeBackend(std::set<std::string> lacks) : lacks_(std::move(lacks)) {}
  std::string name() const override { return "fake"; }
  std::vector<Device*> devices() override { return {&fake_device()}; }
  bool supports(const ir::Node& node) const override { return !lacks_.count(node.op_name()); }
  using Backend::compile;
  std::unique_ptr<backends::Executable> compile(const ir::Graph& graph, const backends::CompileSpec& spec) override {
    for (const ir::NodePtr& n : graph.nodes()) {
      TESSERA_CHECK(supports(*n), "fake backend handed '{}'", n->op_name());
    }
    ++compiles;
    return std::make_unique<Exe>(graph, spec);
  }
  int compiles = 0;

 private:
  class Exe final : public backends::Executable {
   public:
    Exe(const ir::Graph& g, const backends::CompileSpec& spec) : ref_(backends::reference_backend().compile(g)) {
      aliases_ = spec.aliases;
    }
    const ir::Graph& graph() const override { return ref_->graph(); }
    Device& device() const override { return fake_device(); }
    std::vector<Array> run(const std::vector<Array>& inputs) override {
      for (const Array& a : inputs) TESSERA_CHECK(&a.device() == &fake_device(), "fake backend: input on {}", a.device().name());
      std::vector<Array> out;
      for (const Array& r : ref_->run(inputs)) out.push_back(r.to(fake_device()));
      return out;
    }

   private:
    std::unique_ptr<backends::Executable> ref_;
  };
  std::set<std::string> lacks_;
};

TEST(Devices, ArraysKnowWhereTheyLiveAndRefuseHostAccessElsewhere) {
  const Array host = Array::from_vector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(host.on_host());
  EXPECT_EQ(host.device().name(), "cpu");
  const Array dev = host.to(fake_device());
  EXPECT_FALSE(dev.on_host());
  EXPECT_EQ(dev.device().name(), "vulkan:7");
  EXPECT_TESSERA_ERROR(dev.to_f64(), "lives on vulkan:7", "Array::to(host_device())");
  EXPECT_TESSERA_ERROR(dev.data<float>(), "lives on vulkan:7");
  // Views are metadata: a packed slice comes back right, a strided one is refused with a reason.
  const Array row = dev.slice(0, 1, 2);
  EXPECT_EQ(row.to(host_device()).to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_TESSERA_ERROR(dev.transpose(0, 1).to(host_device()), "strided view of vulkan:7 memory");
  // Copies into device memory from host arrays of another dtype convert on the host first.
  Array target = Array::zeros(DType::f32, {2, 2}).to(fake_device());
  target.copy_from(Array::from_vector<double>({5, 6, 7, 8}, {2, 2}));
  EXPECT_EQ(target.to(host_device()).to_vector<float>(), (std::vector<float>{5, 6, 7, 8}));
}

TEST(Aliases, AnAliasedOutputIsWrittenIntoItsInput) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] + a[1], a[1] * 2.0}; };
  const ir::Graph g = trace(f, {{DType::f32, {3}}, {DType::f32, {3}}});
  for (backends::Backend* b : {&backends::reference_backend(), &backends::cpu_backend()}) {
    const auto exe = b->compile(g, {{{0, 0}}});  // output 0 into input 0: an accumulator
    Array acc = Array::from_vector<float>({1, 2, 3}, {3});
    const Array step = Array::from_vector<float>({10, 10, 10}, {3});
    for (int i = 0; i < 3; ++i) {
      const std::vector<Array> out = exe->run({acc, step});
      EXPECT_TRUE(out[0].shares_storage_with(acc)) << b->name();
    }
    EXPECT_EQ(acc.to_vector<float>(), (std::vector<float>{31, 32, 33})) << b->name();
    // run_into with the input passed as the output too.
    std::vector<Array> outs = {acc, Array::empty(DType::f32, {3})};
    exe->run_into({acc, step}, outs);
    EXPECT_EQ(acc.to_vector<float>(), (std::vector<float>{41, 42, 43})) << b->name();
  }
  EXPECT_TESSERA_ERROR(backends::cpu_backend().compile(g, {{{0, 2}}}), "out of range");
  const ir::Graph mixed = trace(f, {{DType::f32, {3}}, {DType::f32, {1}}});
  EXPECT_TESSERA_ERROR(backends::cpu_backend().compile(mixed, {{{1, 0}}}), "the types differ");
  EXPECT_TESSERA_ERROR(backends::cpu_backend().compile(g, {{{0, 0}, {1, 0}}}), "aliased twice");
}

TEST(Decompose, OnlyWhatTheBackendLacksIsDecomposed) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::softmax(a[0]) + ops::log_softmax(a[0])}; };
  const ir::Graph g = trace(f, {{DType::f32, {2, 5}}});
  const ir::Graph d = passes::decompose_where(g, [](const ir::Node& n) { return n.op_name() == "softmax"; });
  std::set<std::string> ops;
  for (const ir::NodePtr& n : d.nodes()) ops.insert(n->op_name());
  EXPECT_FALSE(ops.count("softmax"));
  EXPECT_TRUE(ops.count("log_softmax"));
  EXPECT_TRUE(ops.count("exp"));
  const Array x = random_array({2, 5}, 3, -2, 2, DType::f32);
  const auto want = backends::reference_backend().compile(g)->run({x});
  const auto got = backends::reference_backend().compile(d)->run({x});
  expect_close(Tensor::from_array(got[0]), want[0].to_f64(), 1e-6, 1e-6);
}

TEST(Split, WhatTheDeviceLacksRunsOnTheFallbackAndValuesCrossDevices) {
  FakeBackend fake({"matmul"});
  auto f = [](const std::vector<Tensor>& a) {
    const Tensor h = ops::relu(a[0] * 2.0);   // fake
    const Tensor p = ops::matmul(h, a[1]);    // cpu
    return std::vector<Tensor>{ops::tanh(p), h};  // tanh on fake again; h is an output of the first part
  };
  const ir::Graph g = trace(f, {{DType::f32, {2, 3}}, {DType::f32, {3, 4}}});
  const backends::SplitPlan plan = backends::plan_split(g, fake, backends::cpu_backend());
  ASSERT_EQ(plan.segments.size(), 3u);
  EXPECT_EQ(plan.segments[0].backend, &fake);
  EXPECT_EQ(plan.segments[1].backend, &backends::cpu_backend());
  EXPECT_EQ(plan.segments[2].backend, &fake);
  const auto exe = backends::compile_split(g, fake, backends::cpu_backend());
  EXPECT_EQ(fake.compiles, 2);
  const Array x = random_array({2, 3}, 1, -1, 1, DType::f32), w = random_array({3, 4}, 2, -1, 1, DType::f32);
  const int64_t up = fake_device().uploaded, down = fake_device().downloaded;
  const std::vector<Array> got = exe->run({x, w});
  EXPECT_GT(fake_device().uploaded, up);
  EXPECT_GT(fake_device().downloaded, down);
  const std::vector<Array> want = backends::reference_backend().compile(g)->run({x, w});
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].to(host_device()).to_vector<float>(), want[k].to_vector<float>()) << "output " << k;
  }
  // A device that runs everything gets the whole graph as one executable of its own.
  FakeBackend all({});
  const auto whole = backends::compile_split(g, all, backends::cpu_backend());
  EXPECT_EQ(&whole->device(), &fake_device());
  EXPECT_EQ(all.compiles, 1);
}

TEST(Split, ANodeNoBackendRunsIsNamed) {
  class Nothing final : public backends::Backend {
   public:
    std::string name() const override { return "nothing"; }
    bool supports(const ir::Node&) const override { return false; }
    using Backend::compile;
    std::unique_ptr<backends::Executable> compile(const ir::Graph&, const backends::CompileSpec&) override {
      fail("nothing compiles");
    }
  } nothing;
  const ir::Graph g = trace([](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::exp(a[0])}; },
                            {{DType::f32, {2}}});
  EXPECT_TESSERA_ERROR(backends::plan_split(g, nothing, nothing), "op 'exp'", "neither the nothing nor the nothing");
}

}  // namespace
}  // namespace tessera::test

namespace tessera::test {
namespace {

// Found by the graph fuzzer on the CUDA backend: softmax of an empty axis decomposed into a max over
// zero elements, which does not build. Empty nodes stay whole (and run wherever they are supported).
TEST(Decompose, NodesOverEmptyTensorsStayWhole) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::softmax(a[0], 0)}; };
  const ir::Graph g = trace(f, {{DType::f32, {0}}});
  const ir::Graph d = passes::decompose_where(g, [](const ir::Node& n) { return n.op_name() == "softmax"; });
  ASSERT_EQ(d.nodes().size(), 1u);
  EXPECT_EQ(d.nodes()[0]->op_name(), "softmax");
}

}  // namespace
}  // namespace tessera::test
