// The user-facing entry points of autograd, with PyTorch's semantics and error texts.
//
//   autograd::backward({loss}, {}, {.retain_graph = true});          // accumulate into leaves' .grad
//   auto g = autograd::grad({loss}, {w}, {}, {.create_graph = true}); // return d loss / d w, differentiable
//   auto h = autograd::grad({g[0].pow(2).sum()}, {w});                // ... and differentiate it again
#pragma once

#include <optional>
#include <vector>

#include "engine/core/tensor.h"

namespace tinyddp::autograd {

struct GradOptions {
  std::optional<bool> retain_graph;   // defaults to create_graph
  bool create_graph = false;
  bool allow_unused = false;          // return undefined for inputs not reached instead of throwing
};

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              const BackwardOptions& options = {});

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, const GradOptions& options = {});

}  // namespace tinyddp::autograd
