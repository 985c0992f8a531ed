#include "tessera/io/stablehlo/programs.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/models/vision.h"
#include "tessera/nn/attention.h"
#include "tessera/nn/norm.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/optim.h"

namespace tessera::io::stablehlo {

namespace {

constexpr int64_t kSeqLen = 16, kEmbed = 64, kHeads = 4;
constexpr double kExampleStep = 10;  // completed steps in the training step's example state

// Values are computed on the reference backend (the oracle), whatever the default backend is.
Array evaluate(const Tensor& t) {
  if (t.value().node()->op_name() == "constant") return t.value().node()->attrs().get_tensor("value");
  return backends::reference_backend().compile(ir::Graph::build({}, {t.value()}, "value"))->run({})[0];
}

// A pre-norm transformer block: x + MHA(LN(x)), then h + MLP(LN(h)) with a 4x GELU MLP.
class TransformerBlock : public nn::Module {
 public:
  TransformerBlock(int64_t embed, int64_t heads, ops::Generator& gen) {
    norm1 = register_module("norm1", std::make_shared<nn::LayerNorm>(Shape{embed}));
    attn = register_module("attn", std::make_shared<nn::MultiheadAttention>(embed, heads, true, gen));
    norm2 = register_module("norm2", std::make_shared<nn::LayerNorm>(Shape{embed}));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(embed, 4 * embed, true, gen));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(4 * embed, embed, true, gen));
  }
  Tensor forward(const Tensor& x) override {
    const Tensor h = x + attn->forward((*norm1)(x));
    return h + (*fc2)(ops::gelu((*fc1)((*norm2)(h))));
  }
  std::string name() const override { return "TransformerBlock"; }

  std::shared_ptr<nn::LayerNorm> norm1, norm2;
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::Linear> fc1, fc2;
};

std::shared_ptr<nn::Module> make_model(const std::string& model, ops::Generator& gen) {
  if (model == "transformer") {
    auto block = std::make_shared<TransformerBlock>(kEmbed, kHeads, gen);
    // LayerNorm starts at ones/zeros and the attention bias at zeros: draw them too, so that a
    // lowering that dropped one of them would show in the outputs.
    for (auto& [name, slot] : block->named_parameters()) {
      const std::vector<double> v = evaluate(*slot).to_vector<double>();
      if (std::adjacent_find(v.begin(), v.end(), std::not_equal_to<>()) != v.end()) continue;
      const double centre = v.empty() ? 0.0 : v[0];
      *slot = Tensor::from_array(evaluate(ops::uniform(slot->shape(), centre - 0.2, centre + 0.2, gen)));
    }
    return block;
  }
  return models::make_classifier(model, gen);
}

Shape input_shape(const std::string& model, int64_t batch) {
  if (model == "mlp") return {batch, 784};
  if (model == "cnn") return {batch, 1, 28, 28};
  return {batch, kSeqLen, kEmbed};
}

// Runs `fn` with the module's parameters replaced by `values`, then puts the originals back.
template <class F>
auto with_parameters(nn::Module& module, const std::vector<Tensor>& values, F&& fn) {
  auto slots = module.named_parameters();
  std::vector<Tensor> saved;
  for (size_t i = 0; i < slots.size(); ++i) {
    saved.push_back(*slots[i].second);
    *slots[i].second = values[i];
  }
  struct Restore {
    std::vector<std::pair<std::string, Tensor*>>& s;
    std::vector<Tensor>& v;
    ~Restore() {
      for (size_t i = 0; i < s.size(); ++i) *s[i].second = v[i];
    }
  } restore{slots, saved};
  return fn();
}

Tensor loss_of(const std::string& model, const Tensor& out, const Tensor& y) {
  return model == "transformer" ? ops::mse_loss(out, y) : ops::cross_entropy(out, y);
}

}  // namespace

std::vector<std::string> program_models() {
  return {"mlp", "cnn", "transformer"};
}

Program build_program(const ProgramOptions& o) {
  const std::vector<std::string> known = program_models();
  TESSERA_CHECK(std::find(known.begin(), known.end(), o.model) != known.end(),
                "export: unknown model '{}': expected one of mlp, cnn, transformer", o.model);
  TESSERA_CHECK(o.batch_size >= 1, "export: batch size must be positive, got {}", o.batch_size);
  ops::Generator gen(o.seed);
  std::shared_ptr<nn::Module> module = make_model(o.model, gen);
  const auto params = module->named_parameters();
  const size_t np = params.size();

  Program p;
  p.name = o.train_step ? o.model + "_train_step" : o.model;
  std::vector<ir::TensorType> types;
  auto add_input = [&](const std::string& name, const Array& value) {
    p.input_names.push_back(name);
    p.inputs.push_back(value);
    types.push_back({value.dtype(), value.shape()});
  };
  for (const auto& [name, slot] : params) add_input(name, evaluate(*slot));
  ops::Generator data(o.seed + 1);
  if (o.train_step) {
    // The example state is that of a run some steps in: Adam's first step from zero moments divides
    // each gradient by its own magnitude (plus eps), so for gradients near eps its result swings with
    // the last bits of the gradient, and any two runtimes that sum in different orders disagree.
    for (const auto& [name, slot] : params) {
      add_input(name + ".exp_avg", evaluate(ops::normal(slot->shape(), 0.0, 1e-3, data, slot->dtype())));
    }
    for (const auto& [name, slot] : params) {
      add_input(name + ".exp_avg_sq", evaluate(ops::uniform(slot->shape(), 1e-7, 1e-5, data, slot->dtype())));
    }
    add_input("step", Array::scalar(kExampleStep, DType::f32));
  }
  const Shape xs = input_shape(o.model, o.batch_size);
  add_input("x", evaluate(ops::uniform(xs, 0.0, 1.0, data)));
  if (o.train_step) {
    add_input("y", evaluate(o.model == "transformer" ? ops::normal(xs, 0.0, 1.0, data)
                                                     : ops::randint(0, 10, {o.batch_size}, data, DType::i32)));
  }

  const std::string model = o.model;
  MultiFn fn;
  if (!o.train_step) {
    fn = [module, np](const std::vector<Tensor>& a) -> std::vector<Tensor> {
      const std::vector<Tensor> ps(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(np));
      return {with_parameters(*module, ps, [&] { return module->forward(a[np]); })};
    };
    p.output_names = {model == "transformer" ? "y" : "logits"};
  } else {
    fn = [module, np, model](const std::vector<Tensor>& a) -> std::vector<Tensor> {
      const Tensor& x = a[3 * np + 1];
      const Tensor& y = a[3 * np + 2];
      ScalarFn loss_fn = [&](const std::vector<Tensor>& ps) {
        return with_parameters(*module, ps, [&] { return loss_of(model, module->forward(x), y); });
      };
      const std::vector<Tensor> vg =
          value_and_grad(loss_fn)(std::vector<Tensor>(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(np)));
      // Adam as optim::Adam takes its step: the adam_update op, lr and the step number (from 1) as
      // f64 scalars, so that one function serves every step.
      const AdamConfig c;
      const Tensor t = ops::cast(a[3 * np], DType::f64) + 1.0;
      const Tensor lr = Tensor::scalar(c.lr, DType::f64);
      std::vector<Tensor> new_p, new_m, new_v;
      for (size_t i = 0; i < np; ++i) {
        const std::vector<Tensor> u = ops::adam_update(a[i], vg[i + 1], a[np + i], a[2 * np + i], lr, t,
                                                       {.beta1 = c.beta1, .beta2 = c.beta2, .eps = c.eps});
        new_p.push_back(u[0]);
        new_m.push_back(u[1]);
        new_v.push_back(u[2]);
      }
      std::vector<Tensor> out{vg[0]};
      out.insert(out.end(), new_p.begin(), new_p.end());
      out.insert(out.end(), new_m.begin(), new_m.end());
      out.insert(out.end(), new_v.begin(), new_v.end());
      out.push_back(a[3 * np] + 1.0);
      return out;
    };
    p.output_names = {"loss"};
    for (const char* prefix : {"new.", "new.exp_avg.", "new.exp_avg_sq."}) {
      for (const auto& [name, slot] : params) p.output_names.push_back(prefix + name);
    }
    p.output_names.push_back("step");
  }
  const ir::Graph traced = trace(fn, types, p.input_names);
  p.graph = ir::Graph::build(traced.inputs(), traced.outputs(), p.name);
  return p;
}

std::vector<Array> reference_outputs(const Program& program) {
  return backends::reference_backend().compile(program.graph)->run(program.inputs);
}

}  // namespace tessera::io::stablehlo
