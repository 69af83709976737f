#include "models/scenario/scenario_model.h"

#include <stdexcept>

#include "engine/autograd/checkpoint.h"

namespace tinyddp::models {

ScenarioModel::ScenarioModel(ScenarioModelOptions options) {
  if (options.extra_unused_parameter) unused_scale = register_parameter("unused_scale", ones({1}));
  trunk = register_module("trunk", std::make_shared<nn::Sequential>(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 8)));
  head_a = register_module("head_a", std::make_shared<nn::Linear>(8, 1));
  head_b = register_module("head_b", std::make_shared<nn::Linear>(8, 3));
  text_decoder = register_module("text_decoder", std::make_shared<nn::Linear>(8, 5));
  if (options.buffer) feature_scale = register_buffer("feature_scale", ones({8}));
}

std::vector<Tensor> ScenarioModel::forward(const Tensor& x, const ScenarioForward& how) {
  nn::Module& first = *(*trunk)[0];
  nn::Module& second = *(*trunk)[2];
  // trunk.2, checkpointed when asked; each application is its own checkpoint.
  auto apply_second = [&](const Tensor& in) {
    if (how.checkpoint == Checkpointing::none) return second(in);
    return autograd::checkpoint([&](const Tensor& v) { return second(v); }, in,
                                {.use_reentrant = how.checkpoint == Checkpointing::reentrant});
  };
  Tensor h = apply_second(relu(first(x)));   // (B, 8): what trunk(x) computes
  if (how.reuse) h = apply_second(relu(h));
  if (feature_scale.defined()) h = h * feature_scale;

  std::vector<Tensor> out;
  if (how.text == TextMode::detach) {
    const Tensor hd = h.detach();   // graph separation: b and t do not reach the trunk
    out = {head_a->forward(h), head_b->forward(hd), text_decoder->forward(hd)};
  } else {
    out = {head_a->forward(h), head_b->forward(h)};
    if (how.text != TextMode::no_text) {
      Tensor t = text_decoder->forward(h);
      if (how.text == TextMode::normal) out.push_back(t);
    }
  }
  if (how.features) out.push_back(h);
  return out;
}

ScenarioBatch scenario_batch(uint64_t seed, int rank, int64_t k, bool same_data) {
  // Each batch from its own seed, so batches don't depend on what else the rank drew.
  manual_seed(seed * 1000003ULL + static_cast<uint64_t>(same_data ? 0 : rank + 1) * 7919ULL + static_cast<uint64_t>(k));
  ScenarioBatch batch;
  batch.x = randn({6, 4});
  batch.ya = randn({6, 1});
  batch.yb = randint(0, 3, {6});
  batch.yt = randn({6, 5});
  return batch;
}

Tensor scenario_loss(const ScenarioModel& model, const std::string& term, const std::vector<Tensor>& outputs,
                     const ScenarioBatch& batch, const ScenarioForward& how) {
  if (term == "a") return mse_loss(outputs[0], batch.ya);
  if (term == "b") return cross_entropy(outputs[1], batch.yb);
  if (term == "t") {
    if (how.text == TextMode::no_text || how.text == TextMode::drop_text)
      throw std::invalid_argument("plan: term t used after a forward that did not return t (forward(no_text) and "
                                  "forward(drop_text) return only a and b)");
    return mse_loss(outputs[2], batch.yt);
  }
  if (term == "t_outside") {
    if (!how.features)
      throw std::invalid_argument("plan: term t_outside needs a forward with the features flag, e.g. "
                                  "forward(no_text, features): it applies the text decoder to the features that "
                                  "forward returned");
    return mse_loss(model.text_decoder->forward(outputs.back()), batch.yt);
  }
  if (term == "dummy") {
    Tensor total;
    for (const Tensor& p : model.parameters()) total = total.defined() ? total + p.sum() : p.sum();
    return total * 0.0;
  }
  throw std::invalid_argument("scenario_loss: unknown term '" + term + "'; expected a, b, t, t_outside or dummy.");
}

}  // namespace tinyddp::models
