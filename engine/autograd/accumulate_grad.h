// AccumulateGrad: the node at the end of every leaf's gradient path. It runs the leaf's gradient hooks,
// adds the incoming gradient into .grad, then runs the leaf's post-accumulate-grad hooks; when only an
// undefined gradient arrived it does none of this. Post hooks on the node itself (Node::add_post_hook) run
// either way: DDP's reducer learns that a parameter is ready from one of those, since a parameter whose
// gradient is undefined must be marked ready too (Note [The reducer's hook] in dist/reducer.h).
//
// Accumulation rules (PyTorch's): a fresh .grad is the incoming gradient itself when nothing else holds it
// and it is a contiguous buffer of its own (Note [Stealing the incoming gradient] in accumulate_grad.cpp),
// else a contiguous copy of it; an existing .grad is updated in place (+=) when grad mode is off, and replaced by grad + new when it is on
// (create_graph), so that the accumulated gradient stays differentiable.
#pragma once

#include "engine/autograd/node.h"

namespace tinyddp::autograd {

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf);
  std::string name() const override { return "AccumulateGrad"; }
  TensorList apply(TensorList&& grads) override;
  // The leaf, or undefined if it has been destroyed.
  Tensor leaf() const;

 private:
  std::weak_ptr<TensorImpl> leaf_;   // weak: the leaf owns its graph's accumulator lifetime, not the reverse
};

// The leaf's AccumulateGrad node, created on first use and cached (weakly) on the leaf.
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);

}  // namespace tinyddp::autograd
