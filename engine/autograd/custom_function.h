// torch.autograd.Function's engine half: the node of a custom Function (PyTorch 1.13's PyNode), whose backward is
// a callable (the Python binding's: the user's backward, under the GIL), and 1.13's wrapping of the outputs of its
// forward (_wrap_outputs), which is where in-place and views meet custom Functions.
//
//   auto node = std::make_shared<CustomFunctionNode>("MyFnBackward", backward, inputs);   // edges to the inputs
//   TensorList outs = wrap_custom_function_outputs(node, inputs, forward_outputs, dirty, non_differentiable);
//   node->save(tensors);   // ctx.save_for_backward, after the outputs have their history
//
// Note [Outputs of a custom Function] (1.13's _wrap_outputs). The forward runs under no_grad, so its results carry
// no history; each gets the node's as follows:
//  - an input marked dirty (ctx.mark_dirty: the forward wrote it in place) takes the node as its history as any
//    in-place op's result does (rebase_history: CopySlices on its base when it is a view), after its version is
//    bumped once more; a leaf that requires grad is refused ("... has been used in an in-place operation.");
//  - an input returned as-is becomes a new view of itself whose history is the node (so the input keeps its own);
//  - any other output takes the node as its history in place.
// Every output that is a view (returned as-is, or made from an input inside the forward) is marked as made inside a
// custom Function: an in-place op on it, or on its base while it lives, is refused with 1.13's text, since the
// view+inplace logic (CopySlices, AsStridedBackward0) would replace the user's backward. With more than one
// differentiable output, those views are multi-output views instead (1.13's texts for split's views).
// Outputs marked non-differentiable, of an integer dtype, or of a Function that records nothing keep no history
// (an input among them comes back detached, or as a view of itself when it does not require grad).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/autograd/node.h"

namespace tinyddp::autograd {

class CustomFunctionNode : public Node {
 public:
  // grads: one per output of the forward, undefined where none arrived (materialized as zeros of the output's
  // shape when materialize_grads is on); saved: the saved tensors, unpacked. Returns one gradient per tensor
  // input (a next edge), undefined for none. As 1.13's engine checks any node's, a gradient whose shape differs
  // from its input's is summed down to it when the input's shape broadcasts to it, and refused otherwise
  // ("Function MyFnBackward returned an invalid gradient at index 0 - got [3] but expected shape compatible with
  // [2]"); one of another dtype is cast to the input's.
  using Backward = std::function<TensorList(const TensorList& grads, const TensorList& saved)>;

  CustomFunctionNode(std::string name, Backward backward, const TensorList& inputs);

  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override;
  void release_saved() override;
  void replace_saved_output(uint32_t output_nr, const Tensor& t) override;

  // ctx.save_for_backward's tensors (undefined for None), saved after the outputs got their history so that an
  // output is saved as one (without a reference from the node to itself, and with its history back at unpack).
  void save(const TensorList& tensors);
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Records output `output_nr`'s metadata (shape, dtype, device), for materialized gradients.
  void add_output(const Tensor& output);

 private:
  struct OutputInfo {
    Shape shape;
    DType dtype = DType::f32;
    Device device = Device::cpu();
    bool defined = false;
  };

  // What a gradient for tensor input i must be (1.13's input metadata): its shape and dtype.
  struct InputInfo {
    Shape shape;
    DType dtype = DType::f32;
  };

  std::string name_;
  Backward backward_;
  std::vector<InputInfo> inputs_;
  std::vector<SavedTensor> saved_;
  std::vector<OutputInfo> outputs_;
  bool materialize_grads_ = true;
};

// Note [Outputs of a custom Function]. node: null when the Function records nothing (grad mode off, or no input
// requires grad). inputs: the forward's tensor arguments; outputs: its results (undefined for one that is not a
// tensor); dirty, non_differentiable: what ctx.mark_dirty and ctx.mark_non_differentiable were given. Returns the
// outputs as the caller gets them: a new view for an input returned as-is, otherwise the same tensors.
TensorList wrap_custom_function_outputs(const std::shared_ptr<CustomFunctionNode>& node, const TensorList& inputs,
                                        const TensorList& outputs, const TensorList& dirty,
                                        const TensorList& non_differentiable);

}  // namespace tinyddp::autograd
