#include "models/weighting/loss_weighting.h"

#include "models/gradient_surgery/mgda.h"
#include "models/gradient_surgery/pcgrad.h"
#include "models/weighting/fixed.h"
#include "models/weighting/gradnorm.h"
#include "models/weighting/uncertainty.h"

namespace tinyddp::models {

std::string weights_optimizer_name(WeightsOptimizer optimizer) {
  return optimizer == WeightsOptimizer::adam ? "adam" : "sgd";
}

WeightsOptimizer parse_weights_optimizer(const std::string& name) {
  if (name == "adam") return WeightsOptimizer::adam;
  if (name == "sgd") return WeightsOptimizer::sgd;
  throw Error("unknown optimizer of the task weights '" + name + "'; expected adam (the default, the paper's "
              "NYUv2 setting) or sgd (w -= lr dL_grad/dw).");
}

std::string grad_norm_method_name(GradNormMethod method) {
  return method == GradNormMethod::direct ? "direct" : "gram";
}

GradNormMethod parse_grad_norm_method(const std::string& name) {
  if (name == "direct") return GradNormMethod::direct;
  if (name == "gram") return GradNormMethod::gram;
  throw Error("unknown GradNorm gradient-norm method '" + name + "'; expected direct (the default: form "
              "grad_W L_i, then its norm) or gram (the norm from the shared layer's input and output gradient, "
              "without forming grad_W L_i).");
}

std::vector<std::string> weighting_kinds() { return {"fixed", "uncertainty", "gradnorm", "gradnorm-squared", "pcgrad", "mgda"}; }

std::unique_ptr<LossWeighting> make_weighting(const std::string& kind, int num_tasks, WeightingOptions options) {
  if (kind == "fixed") return std::make_unique<FixedWeighting>(num_tasks, std::move(options));
  if (kind == "uncertainty") return std::make_unique<UncertaintyWeighting>(num_tasks, std::move(options));
  if (kind == "gradnorm") return std::make_unique<GradNormWeighting>(num_tasks, std::move(options));
  if (kind == "gradnorm-squared") return std::make_unique<GradNormSquaredWeighting>(num_tasks, std::move(options));
  if (kind == "pcgrad") return std::make_unique<PCGradWeighting>(num_tasks, std::move(options));
  if (kind == "mgda") return std::make_unique<MGDAWeighting>(num_tasks, std::move(options));
  std::string known;
  for (const std::string& k : weighting_kinds()) known += (known.empty() ? "" : ", ") + k;
  throw Error("make_weighting: unknown weighting '" + kind + "'; expected one of: " + known + ".");
}

}  // namespace tinyddp::models
