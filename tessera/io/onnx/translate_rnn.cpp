// RNN, GRU and LSTM unrolled over the (static) sequence length: per step and direction, the gates are
// matmuls of the step's input and the previous hidden state with the weights' row blocks, in the
// gate order the spec gives (GRU: z, r, h; LSTM: i, o, f, c). The default activations only; clip,
// custom activations and per-batch sequence lengths are refused by name.
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/creation.h"
#include "tessera/ops/linalg.h"
#include "tessera/ops/shape.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

enum class Cell { rnn, gru, lstm };

struct Weights {
  std::vector<Tensor> w, r, wb, rb;  // per gate: W [h, in], R [h, h], biases [h]
  Tensor peephole;                    // LSTM: [3h] (i, o, f) or undefined
};

int gates(Cell cell) { return cell == Cell::rnn ? 1 : cell == Cell::gru ? 3 : 4; }

// Direction d's weights cut into their gate blocks.
Weights weights_of(const NodeContext& c, Cell cell, int64_t d, int64_t hidden) {
  const int g = gates(cell);
  Weights out;
  const Tensor w = ops::squeeze(ops::slice(c.input(1), 0, d, d + 1), {0});
  const Tensor r = ops::squeeze(ops::slice(c.input(2), 0, d, d + 1), {0});
  const Tensor b = c.has_input(3) ? ops::squeeze(ops::slice(c.input(3), 0, d, d + 1), {0})
                                  : ops::zeros({2 * g * hidden}, w.dtype());
  for (int k = 0; k < g; ++k) {
    out.w.push_back(ops::slice(w, 0, k * hidden, (k + 1) * hidden));
    out.r.push_back(ops::slice(r, 0, k * hidden, (k + 1) * hidden));
    out.wb.push_back(ops::slice(b, 0, k * hidden, (k + 1) * hidden));
    out.rb.push_back(ops::slice(b, 0, (g + k) * hidden, (g + k + 1) * hidden));
  }
  if (cell == Cell::lstm && c.has_input(7)) out.peephole = ops::squeeze(ops::slice(c.input(7), 0, d, d + 1), {0});
  return out;
}

Tensor affine(const Tensor& x, const Tensor& w) { return ops::matmul(x, ops::transpose(w, 0, 1)); }

void check_defaults(const NodeContext& c, Cell cell) {
  const std::vector<std::vector<std::string>> defaults = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  std::vector<std::string> want = defaults[static_cast<size_t>(cell)];
  if (c.attr_string("direction", "forward") == "bidirectional") want.insert(want.end(), want.begin(), want.end());
  if (c.attr_strings("activations", want) != want) c.fail("activations other than the defaults are not supported");
  if (c.has_attr("activation_alpha") || c.has_attr("activation_beta")) c.fail("activation_alpha/beta are not supported");
  if (c.has_attr("clip")) c.fail("clip is not supported");
  const int64_t layout = c.attr_int("layout", 0);
  if (layout != 0 && layout != 1) c.fail("layout {} is not 0 or 1", layout);
}

// Layout 1 (batch first) swaps the first two axes of X, the initial states and the outputs.
Tensor batch_first(const Tensor& t, bool swap) { return swap && t.defined() ? ops::transpose(t, 0, 1) : t; }

std::vector<Tensor> recurrent(NodeContext& c, Cell cell) {
  check_defaults(c, cell);
  const bool swap = c.attr_int("layout", 0) == 1;
  const Tensor x = batch_first(c.input(0), swap);
  const Tensor initial_h = c.has_input(5) ? batch_first(c.input(5), swap) : Tensor();
  const Tensor initial_c = cell == Cell::lstm && c.has_input(6) ? batch_first(c.input(6), swap) : Tensor();
  require_floating(c, x);
  if (x.rank() != 3) c.fail("X has rank {}, expected [seq, batch, input]", x.rank());
  const int64_t hidden = c.required_int("hidden_size");
  const std::string direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    c.fail("direction {} is not forward, reverse or bidirectional", direction);
  }
  if (cell == Cell::lstm && c.attr_int("input_forget", 0) != 0) c.fail("input_forget = 1 is not supported");
  const bool before_reset = cell == Cell::gru && c.attr_int("linear_before_reset", 0) != 0;
  const int64_t seq = x.dim(0), batch = x.dim(1), dirs = direction == "bidirectional" ? 2 : 1;
  if (c.has_input(4)) {
    for (int64_t n : c.constant_ints(4, "sequence_lens")) {
      if (n != seq) c.fail("sequence_lens {} differs from the sequence length {} (not supported)", n, seq);
    }
  }
  std::vector<Tensor> ys(static_cast<size_t>(dirs)), hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    const Weights w = weights_of(c, cell, d, hidden);
    Tensor h = initial_h.defined() ? ops::squeeze(ops::slice(initial_h, 0, d, d + 1), {0})
                                   : ops::zeros({batch, hidden}, x.dtype());
    Tensor cstate = initial_c.defined() ? ops::squeeze(ops::slice(initial_c, 0, d, d + 1), {0})
                                        : ops::zeros({batch, hidden}, x.dtype());
    const bool backwards = direction == "reverse" || d == 1;
    std::vector<Tensor> steps(static_cast<size_t>(seq));
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = backwards ? seq - 1 - s : s;
      const Tensor xt = ops::squeeze(ops::slice(x, 0, t, t + 1), {0});
      auto gate = [&](int k) { return affine(xt, w.w[k]) + w.wb[k] + affine(h, w.r[k]) + w.rb[k]; };
      if (cell == Cell::rnn) {
        h = ops::tanh(gate(0));
      } else if (cell == Cell::gru) {
        const Tensor z = ops::sigmoid(gate(0)), r = ops::sigmoid(gate(1));
        const Tensor candidate =
            before_reset ? ops::tanh(affine(xt, w.w[2]) + w.wb[2] + r * (affine(h, w.r[2]) + w.rb[2]))
                         : ops::tanh(affine(xt, w.w[2]) + w.wb[2] + affine(r * h, w.r[2]) + w.rb[2]);
        h = (1.0 - z) * candidate + z * h;
      } else {
        Tensor i = gate(0), o = gate(1), f = gate(2);
        if (w.peephole.defined()) {
          i = i + ops::slice(w.peephole, 0, 0, hidden) * cstate;
          f = f + ops::slice(w.peephole, 0, 2 * hidden, 3 * hidden) * cstate;
        }
        const Tensor next_c = ops::sigmoid(f) * cstate + ops::sigmoid(i) * ops::tanh(gate(3));
        if (w.peephole.defined()) o = o + ops::slice(w.peephole, 0, hidden, 2 * hidden) * next_c;
        cstate = next_c;
        h = ops::sigmoid(o) * ops::tanh(cstate);
      }
      steps[static_cast<size_t>(t)] = ops::unsqueeze(h, 0);
    }
    ys[static_cast<size_t>(d)] = ops::unsqueeze(ops::concat(steps, 0), 1);  // [seq, 1, batch, hidden]
    hs.push_back(ops::unsqueeze(h, 0));
    cs.push_back(ops::unsqueeze(cstate, 0));
  }
  const Tensor y = ops::concat(ys, 1);  // [seq, dirs, batch, hidden]
  std::vector<Tensor> out = {swap ? ops::permute(y, {2, 0, 1, 3}) : y, batch_first(ops::concat(hs, 0), swap)};
  if (cell == Cell::lstm) out.push_back(batch_first(ops::concat(cs, 0), swap));
  return out;
}

}  // namespace

void add_rnn_translations(TranslationTable& t) {
  t.add("RNN", {1, 7, 14}, 7, [](NodeContext& c) { return recurrent(c, Cell::rnn); });
  t.add("GRU", {1, 3, 7, 14}, 7, [](NodeContext& c) { return recurrent(c, Cell::gru); });
  t.add("LSTM", {1, 7, 14}, 7, [](NodeContext& c) { return recurrent(c, Cell::lstm); });
}

}  // namespace tessera::io::onnx
