// Helpers shared by the loss-weighting strategies (models/weighting/*.cpp); not part of the public API.
#pragma once

#include <string>
#include <vector>

#include "models/weighting/loss_weighting.h"

namespace tinyddp::models::detail {

// Checks `options` for every strategy (sizes, ranges) and returns the initial weights (all 1 by default).
std::vector<double> checked_initial_weights(const std::string& kind, int num_tasks, const WeightingOptions& options);

// Task i's name for messages: options.task_names[i] when given, else "task i".
std::string task_name(const WeightingOptions& options, size_t i);

// The values of T scalar task losses (checked: count, one element each, floating).
std::vector<double> loss_values(const std::string& kind, const std::vector<Tensor>& losses, int num_tasks);

// sum_i weights[i] * L_i with the weights as plain constants: the network's backward sees exactly the
// gradient of this sum and nothing reaches any weight tensor.
Tensor weighted_sum(const std::vector<Tensor>& losses, const std::vector<double>& weights);

bool all_finite(const std::vector<double>& values);

// "[a, b, c]" for messages.
std::string format_values(const std::vector<double>& values);

// w <- max(w, min_weight), then w <- w * T / sum(w), so that sum w = T (T = w.size()). Returns how many
// entries were below min_weight (raised by the clamp).
int clamp_and_renormalize(std::vector<double>& w, double min_weight);

}  // namespace tinyddp::models::detail
