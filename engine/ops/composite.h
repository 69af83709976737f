// An op composed of other engine ops, recorded in the graph as the one node PyTorch 1.13 records for it.
//
//   Tensor n = composite("NormBackward1", {x}, [&] { return TensorList{sqrt(sum(x * x, {1}))}; })[0];
//   n.grad_fn()->name() == "NormBackward1", its next edge is x's (1.13's graph, one level down as well)
//
// Why: tinyddp builds many ops (norm, std, topk, conv2d, the losses ...) of the engine's own, each with its
// backward, so the graph a script prints showed the last op of the composition (SqrtBackward0) where 1.13 shows
// its fused node. composite() runs the composition as before, with grad mode on, then hides the graph it recorded
// (the "inner" graph) behind one node named as 1.13's, whose next edges are the inputs' own. That node's backward
// runs the inner nodes, in the engine's order, from the gradients of the outputs down to the inputs: the same
// rules in the same order as before, so values and gradients are bitwise those of the composition, and under
// create_graph the rules record a graph as they always do (the op stays differentiable to any order).
//
// Note [What a composite's inner graph is]: the nodes the forward created (their sequence numbers follow the one
// composite() takes before running it) that the outputs reach without passing an input's node. Every path from
// an output must end at an input (or at a tensor that does not require grad): where the composition reads another
// tensor that requires grad (one 1.13 gives no gradient, such as a loss's class weights, passed requiring grad),
// no node is made and the outputs keep the composition's own graph, so that tensor still gets its gradient.
// Releasing the composite's saved state (a backward without retain_graph) releases every inner node's (Note
// [Releasing a composite's inner graph]), so a second backward raises PyTorch's "Trying to backward through the
// graph a second time" exactly where a saved tensor of the composition is read.
#pragma once

#include <functional>
#include <string>

#include "engine/autograd/node.h"
#include "engine/core/tensor.h"

namespace tinyddp {

// Runs forward (engine ops over `inputs`, which may hold undefined tensors: no edge) and returns its outputs,
// those that require grad re-wrapped as outputs number 0, 1, ... of one node named `name` (views of the same
// storage and version counter, views still where the output was one). Outputs that do not require grad (indices,
// masks) come back as forward returned them. Without grad mode or an input that requires grad, forward's outputs.
// saved_outputs: the outputs 1.13's node saves (LeakyReluBackward1 its result, ...): an in-place change of one
// before the backward raises 1.13's "modified by an inplace operation" error naming this node, and an in-place op
// made of the composite (apply_inplace) rebinds it to the tensor written (Node::replace_saved_output).
// saved_inputs: the inputs 1.13's node saves (VarBackward0 its input, ...), checked alike (the error names the
// input's history then), whether or not the composition itself keeps them.
autograd::TensorList composite(const std::string& name, const autograd::TensorList& inputs,
                               const std::function<autograd::TensorList()>& forward,
                               const std::vector<size_t>& saved_outputs = {},
                               const std::vector<size_t>& saved_inputs = {});

}  // namespace tinyddp
