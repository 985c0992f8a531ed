#pragma once
// The graph fuzzer's generator: a seeded random graph over the whole op set — random shapes and
// ranks, broadcasting, views (slices with steps, permutes, expands), every dtype, fan-out and fan-in,
// shared subexpressions, several outputs, reductions feeding elementwise chains, products and
// convolutions that share inputs and consumers — and, for some graphs, their gradients.
//
// Each value carries facts: an interval holding every element (so domains are respected: log sees
// positive values, exp small ones) and whether it is exact — integer-valued and small enough that
// every backend must compute it bit for bit. Discontinuous ops (floor, comparisons, argmax, casts to
// integers) and, in gradient graphs, kinks (relu, max, clamp, ...) only take exact operands, so a
// rounding difference can never turn into a large, legitimate disagreement.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/ir/graph.h"
#include "tessera/testing/graph_fuzz/input_spec.h"

namespace tessera::testing::fuzz {

struct GeneratorOptions {
  int min_ops = 1, max_ops = 16;  // recipes applied (a recipe adds one to a few nodes)
  int max_rank = 4;
  int64_t max_dim = 5;
  int64_t max_elements = 1024;  // per value
  double gradient_probability = 0.25;
  double constant_probability = 0.15;  // a fresh leaf is a constant rather than a graph input
  // Some graphs are few ops over large values (dims up to 48, 64 Ki elements): vector loops with
  // tails, packed GEMM panels, work split over threads.
  double large_probability = 0.1;
  std::vector<std::string> only;       // when not empty: only these recipes
};

struct GeneratedGraph {
  ir::Graph graph;
  std::vector<InputSpec> specs;      // per graph input
  std::vector<bool> exact;           // per graph output: the backends must agree bit for bit
  bool gradient = false;             // the outputs include gradients
  std::vector<std::string> recipes;  // what was applied, in order
};

GeneratedGraph generate_graph(uint64_t seed, const GeneratorOptions& options = {});

// The recipes by name, and every registered op the generator builds.
std::vector<std::string> recipe_names();
std::set<std::string> generated_ops();
// Registered ops the generator does not build directly, each with the reason.
const std::map<std::string, std::string>& ops_not_generated();

}  // namespace tessera::testing::fuzz
