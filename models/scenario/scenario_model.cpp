#include "models/scenario/scenario_model.h"

#include <stdexcept>

namespace tinyddp::models {

ScenarioModel::ScenarioModel(bool extra_unused_parameter) {
  if (extra_unused_parameter) unused_scale = register_parameter("unused_scale", ones({1}));
  trunk = register_module("trunk", std::make_shared<nn::Sequential>(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 8)));
  head_a = register_module("head_a", std::make_shared<nn::Linear>(8, 1));
  head_b = register_module("head_b", std::make_shared<nn::Linear>(8, 3));
  text_decoder = register_module("text_decoder", std::make_shared<nn::Linear>(8, 5));
}

std::vector<Tensor> ScenarioModel::forward(const Tensor& x, TextMode mode) {
  const Tensor h = trunk->forward(x);   // (B, 8)
  if (mode == TextMode::detach) {
    const Tensor hd = h.detach();        // graph separation: b and t do not reach the trunk
    return {head_a->forward(h), head_b->forward(hd), text_decoder->forward(hd)};
  }
  Tensor a = head_a->forward(h), b = head_b->forward(h);
  if (mode == TextMode::no_text) return {a, b};
  Tensor t = text_decoder->forward(h);
  if (mode == TextMode::drop_text) return {a, b};
  return {a, b, t};
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
                     const ScenarioBatch& batch) {
  if (term == "a") return mse_loss(outputs[0], batch.ya);
  if (term == "b") return cross_entropy(outputs[1], batch.yb);
  if (term == "t") {
    if (outputs.size() < 3)
      throw std::invalid_argument("plan: term t used after a forward that did not return t (forward(no_text) and "
                                  "forward(drop_text) return only a and b)");
    return mse_loss(outputs[2], batch.yt);
  }
  if (term == "dummy") {
    Tensor total;
    for (const Tensor& p : model.parameters()) total = total.defined() ? total + p.sum() : p.sum();
    return total * 0.0;
  }
  throw std::invalid_argument("scenario_loss: unknown term '" + term + "'; expected a, b, t or dummy.");
}

}  // namespace tinyddp::models
