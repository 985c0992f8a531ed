#pragma once
// Basic layers: Linear, Embedding, Dropout, Flatten, Sequential and Lambda (activations: activation.h).
// Every module is a class built with std::make_shared<nn::X>(...), as Sequential and register_module
// hold modules by shared_ptr.
#include <functional>
#include <memory>
#include <vector>

#include "tessera/nn/module.h"
#include "tessera/ops/nn.h"
#include "tessera/ops/random.h"

namespace tessera::nn {

// y = x W^T + b with W [out, in]; PyTorch's default initialisation.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, ops::Generator& gen = ops::default_generator());
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  // weight [out_features, in_features] (y = x W^T + b), bias [out_features] (undefined without bias).
  Tensor weight, bias;

 private:
  int64_t in_, out_;
};

// A table of num_embeddings vectors of size dim, looked up by integer index.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, ops::Generator& gen = ops::default_generator());
  Tensor forward(const Tensor& indices) override;
  std::string name() const override;
  Tensor weight;  // [num_embeddings, dim], row i is the vector of index i; starts N(0, 1)
};

// Zeroes elements with probability p in training (scaling the rest by 1 / (1 - p)); identity in eval.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, ops::Generator& gen = ops::default_generator());
  Tensor forward(const Tensor& x) override;
  std::string name() const override;

 private:
  double p_;
  ops::Generator* gen_;  // the caller's generator, which outlives the module
};

// Merges axes start_axis..end_axis into one.
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_axis = 1, int64_t end_axis = -1) : start_(start_axis), end_(end_axis) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Flatten"; }

 private:
  int64_t start_, end_;
};

// Runs its children in order; they are named "0", "1", ...
class Sequential : public Module {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<Module>> layers);
  Sequential& add(std::shared_ptr<Module> layer);  // appends, named by position
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Sequential"; }
  size_t size() const { return layers_.size(); }           // how many layers
  Module& operator[](size_t i) { return *layers_.at(i); }  // layer i; throws past the end

 private:
  std::vector<std::shared_ptr<Module>> layers_;
};

// A stateless module wrapping a tensor function (activations).
class Lambda : public Module {
 public:
  Lambda(std::string name, std::function<Tensor(const Tensor&)> fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  Tensor forward(const Tensor& x) override { return fn_(x); }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  std::function<Tensor(const Tensor&)> fn_;
};

}  // namespace tessera::nn
