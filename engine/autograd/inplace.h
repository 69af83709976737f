// In-place ops under autograd: views that know their base, the history an in-place op gives the tensor it writes,
// and the errors of the writes PyTorch refuses.
//
//   Tensor a = w * 2;                  // a.grad_fn: MulBackward0
//   a.add_(1);                         // a.grad_fn: AddBackward0, whose input is MulBackward0 ("rebase")
//   Tensor v = select(a, 0, 1);        // a view of a (v.view_base() is a)
//   v.mul_(3);                         // a.grad_fn: CopySlices(AddBackward0, v's place in a, MulBackward0)
//                                      // v.grad_fn, when next read: AsStridedBackward0 -> CopySlices
//
// Note [In-place ops under autograd]
// An in-place op changes values the graph may already depend on, so autograd must refuse the writes that would
// make gradients wrong, route the gradient of the new values through the op, and notice saved tensors that
// changed (SavedTensor compares the version counter). tinyddp follows PyTorch 1.13:
//  - y.op_(args) records op's node, whose input 0 is y's history before the write, and the node becomes y's
//    grad_fn. A leaf that requires grad is refused: its .grad would stop being the gradient of the values it
//    holds. A tensor that does not require grad but receives one that does gets history (and stops being a leaf).
//  - A view shares its base's memory, so writing into the view rewrites the base: the write is recorded on the
//    base, as CopySlices(the base's old history, the view's place in the base, op's node). In the backward,
//    CopySlices gives op's node the part of the gradient that falls on the view, and the base's old history the
//    rest with op's gradient written over that part. A view knows the root of its chain of views, so a view of a
//    view records on the root too.
//  - Every view of a base that changed in place (the written view among them) now reads values that went
//    through the write: Tensor::grad_fn() rebuilds its history, when next read, as AsStridedBackward0 of the
//    base's new history. The version counter tells that the base changed: each view remembers its value when its
//    grad_fn was last set.
//  - Views through which 1.13 refuses to write under autograd: made under no_grad or inference mode (ambiguous:
//    was the write meant to be tracked?), one of several views of one op (split, unbind), whose node cannot be
//    rebuilt from the base, and a custom Function's output that is a view (its node is the user's:
//    custom_function.h). Also a view of a leaf that requires grad, like the leaf itself.
//  - An op that saved its own output, made in place, saved self: the saved output is rebound to self after the
//    rebase (Node::replace_saved_output), so a later write of self is caught at the backward; written through a
//    view, it unpacks with the view's new history while the view lives (SavedTensor::rebind_output), as 1.13's.
//  - Hooks: retain_grad's follows the tensor to its new node (not through a write into one of its views, whose
//    base's .grad then stays the gradient of the values before it); register_hook's go where the first went
//    (TensorImpl::hooks_node), both as 1.13's.
//  - In-place view ops (t_, squeeze_ ...) change only the layout: their node becomes the history of the tensor
//    itself, a view or not (set_inplace_view_history).
// How an op is made in place: engine/ops/inplace.cpp's apply_inplace computes the out-of-place op on a copy of
// self's values that carries self's history, writes the result into self (one version bump), and rebases
// self's history onto the result's node, which is the same node, with 1.13's name, as the out-of-place op's
// (or the in-place form's where 1.13's differs: composite() names it, tinyddp/nn/functional.py's _in_place).
#pragma once

#include <memory>

#include "engine/autograd/node.h"

namespace tinyddp::autograd {

// Marks `out`, just made by a view op over `base`, as a view of base's root (under no_grad or inference mode: a view
// made there). multi_output: one of several views the op returns (split, chunk, unbind).
void mark_view(const Tensor& out, const Tensor& base, bool multi_output = false);

// PyTorch's check_inplace: throws 1.13's error when `self` may not be written in place by an op that records a
// graph (`records`: grad mode is on and some input requires grad). Does nothing when it does not record.
void check_inplace(const Tensor& self, bool records);

// Gives `self`, just written in place, the history of the op whose node is `fn` (fn's input 0 is self's history
// before the write, fn's output 0 the new values): fn itself, or CopySlices on the base when self is a view.
void rebase_history(const Tensor& self, std::shared_ptr<Node> fn);

// Gives `self`, whose layout an in-place view op (t_, squeeze_ ...) just changed, that op's node as its history: on
// self itself, a view or not (no CopySlices: its values did not change, only how they are laid out), as 1.13's.
void set_inplace_view_history(const Tensor& self, std::shared_ptr<Node> fn);

// After an in-place op gave `self` a new grad_fn (it was output old_output_nr of old_fn): retain_grad's hook leaves
// old_fn for the new node, so .grad is the gradient of the values self holds now (1.13's
// update_tensor_hooks_on_new_gradfn). Hooks of register_hook stay where they were (TensorImpl::hooks_node).
void move_retains_grad_hook(const TensorImpl& self, Node* old_fn, uint32_t old_output_nr);

// The row-major positions, among `base`'s elements, of the elements of `view` (which reads base's storage), as
// an int64 tensor of view's shape.
Tensor base_positions(const Tensor& base, const Tensor& view);

}  // namespace tinyddp::autograd
