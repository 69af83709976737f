// The node of a custom autograd Function and the wrapping of its outputs (Note [Outputs of a custom Function] in
// custom_function.h), as PyTorch 1.13's PyNode and _wrap_outputs.
#include "engine/autograd/custom_function.h"

#include "engine/autograd/grad_mode.h"
#include "engine/autograd/inplace.h"
#include "engine/ops/ops.h"

namespace tinyddp::autograd {

CustomFunctionNode::CustomFunctionNode(std::string name, Backward backward, const TensorList& inputs)
    : name_(std::move(name)), backward_(std::move(backward)) {
  auto& edges = mutable_next_edges();
  edges.reserve(inputs.size());
  inputs_.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    edges.push_back(gradient_edge(t));
    inputs_.push_back(t.defined() ? InputInfo{t.shape(), t.dtype()} : InputInfo{});
  }
  set_num_inputs(0);
}

namespace {

// Whether `shape` broadcasts to `target` (each of its dims, aligned from the right, is target's or 1).
bool expands_to(const Shape& shape, const Shape& target) {
  if (shape.size() > target.size()) return false;
  const size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != target[lead + i] && shape[i] != 1) return false;
  return true;
}

}  // namespace

void CustomFunctionNode::add_output(const Tensor& output) {
  OutputInfo info;
  if (output.defined()) info = {output.shape(), output.dtype(), output.device(), true};
  outputs_.push_back(std::move(info));
  set_num_inputs(static_cast<uint32_t>(outputs_.size()));
}

void CustomFunctionNode::save(const TensorList& tensors) {
  saved_.clear();
  for (const Tensor& t : tensors) saved_.emplace_back(t, t.defined() && t.grad_fn().get() == this);
}

// 1.13's PyNode::apply unpacks the saved tensors when the backward reads ctx.saved_tensors; here they are unpacked
// before it runs (the version check, and a saved output's history), which differs only for a backward that saves
// a tensor it never reads.
TensorList CustomFunctionNode::apply(TensorList&& grads) {
  TensorList saved;
  saved.reserve(saved_.size());
  for (const SavedTensor& s : saved_) saved.push_back(s.unpack(*this));
  for (size_t k = 0; k < grads.size() && k < outputs_.size(); ++k) {
    const OutputInfo& info = outputs_[k];
    if (!grads[k].defined() && materialize_grads_ && info.defined)
      grads[k] = zeros(info.shape, info.dtype, info.device);
  }
  TensorList out = backward_(grads, saved);
  TINYDDP_INTERNAL_ASSERT(out.size() == next_edges().size(), name_, " returned ", out.size(), " gradients for ",
                          next_edges().size(), " tensor inputs.");
  for (size_t i = 0; i < out.size(); ++i) {
    Tensor& grad = out[i];
    if (!grad.defined() || !next_edges()[i].valid()) continue;
    const InputInfo& input = inputs_[i];
    if (grad.shape() != input.shape) {
      TINYDDP_CHECK(expands_to(input.shape, grad.shape()), "Function ", name_,
                    " returned an invalid gradient at index ", i, " - got ", shape_str(grad.shape()),
                    " but expected shape compatible with ", shape_str(input.shape));
      grad = sum_to(grad, input.shape);
    }
    if (grad.dtype() != input.dtype) grad = grad.to(input.dtype);
  }
  return out;
}

void CustomFunctionNode::release_saved() {
  for (auto& s : saved_) s.release();
}

void CustomFunctionNode::replace_saved_output(uint32_t output_nr, const Tensor& t) {
  for (auto& s : saved_)
    if (s.is_output() && s.output_nr() == output_nr) s.rebind_output(t);
}

namespace {

bool contains(const TensorList& list, const Tensor& t) {
  for (const Tensor& u : list)
    if (u.defined() && u.is_same(t)) return true;
  return false;
}

// 1.13's _view_as_self_with_no_grad: a view of all of t, made under no_grad (so it is restricted as such a view is,
// until the caller marks it otherwise).
Tensor view_of_self(const Tensor& t) {
  NoGradGuard no_grad;
  Tensor out = make_view(t, t.shape(), t.strides(), t.offset());
  mark_view(out, t);
  return out;
}

// Gives `t` (a tensor the caller owns) the history output_nr of node: set in place, as 1.13's set_gradient_edge
// (for a view, its history stands as set: it is not rebuilt from its base until the base changes again).
void set_gradient_edge(const Tensor& t, const std::shared_ptr<CustomFunctionNode>& node, uint32_t output_nr) {
  TensorImpl& impl = *t.impl();
  impl.grad_fn = node;
  impl.output_nr = output_nr;
  if (t.is_view()) impl.view_version = t.version();
}

}  // namespace

TensorList wrap_custom_function_outputs(const std::shared_ptr<CustomFunctionNode>& node, const TensorList& inputs,
                                        const TensorList& outputs, const TensorList& dirty,
                                        const TensorList& non_differentiable) {
  for (const Tensor& t : dirty) t.bump_version();   // 1.13's _mark_dirty, before the outputs are wrapped
  TensorList result;
  result.reserve(outputs.size());
  size_t differentiable_outputs = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor var = outputs[i];
    if (node) node->add_output(var);
    if (!var.defined()) {
      result.push_back(var);
      continue;
    }
    const auto output_nr = static_cast<uint32_t>(i);
    const bool is_input = contains(inputs, var);
    const bool is_modified = contains(dirty, var);
    const bool is_differentiable = node && !contains(non_differentiable, var) && is_floating(var.dtype());
    if (!is_differentiable) {
      if (!var.requires_grad()) {
        if (is_input && !is_modified) var = view_of_self(var);
      } else if (is_input) {
        var = var.detach();   // an input that requires grad, returned detached rather than changed
      } else if (!var.is_view()) {
        var.detach_();
      }
    } else if (is_modified) {
      TINYDDP_CHECK(!(var.is_leaf() && var.requires_grad()),
                    "a leaf Variable that requires grad has been used in an in-place operation.");
      // (1.13 only warns of a dirty tensor that is no input: "Only input Tensors should be given to
      // ctx.mark_dirty()", and records it as here.)
      TINYDDP_CHECK(!(var.is_view() && outputs.size() > 1),
                    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
                    "cannot return more than one Tensor. This is not supported by the current autograd engine. You "
                    "should either make sure the input is not a view (using .clone() for example) or make your "
                    "Function only return one Tensor (potentially splitting it into two Functions: one doing the "
                    "inplace that returns a single Tensor and a second one that does the other operations). You can "
                    "ask on the forum https://discuss.pytorch.org/ if you need help to do this change.");
      std::shared_ptr<Node> fn = node;
      rebase_history(var, std::move(fn));
      if (!var.is_view()) var.impl()->output_nr = output_nr;
    } else if (is_input) {
      var = view_of_self(var);
      set_gradient_edge(var, node, output_nr);
    } else {
      set_gradient_edge(var, node, output_nr);
    }
    // Note [Outputs of a custom Function]: a view among the outputs is one whose node is the user's.
    if (!(is_input && is_modified) && var.is_view()) var.impl()->view_creation = ViewCreation::in_custom_function;
    if (is_differentiable) ++differentiable_outputs;
    result.push_back(var);
  }
  if (differentiable_outputs > 1)
    for (const Tensor& var : result)
      if (var.defined() && var.is_view()) var.impl()->view_creation = ViewCreation::multi_output;
  return result;
}

}  // namespace tinyddp::autograd
