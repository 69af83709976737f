// Note [In-place ops under autograd] (inplace.h): views that know their base, CopySlices, AsStridedBackward0.
#include "engine/autograd/inplace.h"

#include <algorithm>
#include <limits>

#include "engine/autograd/grad_mode.h"
#include "engine/core/inference_mode.h"
#include "engine/ops/ops.h"

namespace tinyddp::autograd {

namespace {

// Where a tensor's elements lie in its storage: enough to find a view's elements among its base's later.
struct Geometry {
  Shape shape;
  Shape strides;
  int64_t offset = 0;   // elements
};

Geometry geometry_of(const Tensor& t) { return {t.shape(), t.strides(), t.offset()}; }

// The storage offset of each element of g, in row-major order.
std::vector<int64_t> element_offsets(const Geometry& g) {
  std::vector<int64_t> out{g.offset};
  for (size_t d = 0; d < g.shape.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<size_t>(g.shape[d]));
    for (int64_t o : out)
      for (int64_t i = 0; i < g.shape[d]; ++i) next.push_back(o + i * g.strides[d]);
    out = std::move(next);
  }
  return out;
}

bool is_contiguous_geometry(const Geometry& g) {
  int64_t expected = 1;
  for (size_t i = g.shape.size(); i-- > 0;) {
    if (g.shape[i] == 1) continue;
    if (g.strides[i] != expected) return false;
    expected *= g.shape[i];
  }
  return true;
}

// The row-major positions among base's elements of view's elements, as an int64 tensor of the view's shape.
Tensor positions(const Geometry& base, const Geometry& view) {
  const std::vector<int64_t> offsets = element_offsets(view);
  std::vector<int64_t> out(offsets.size());
  if (is_contiguous_geometry(base)) {
    for (size_t k = 0; k < out.size(); ++k) out[k] = offsets[k] - base.offset;
  } else {   // storage offset -> row-major position, over the span the base covers
    const std::vector<int64_t> base_offsets = element_offsets(base);
    const auto [lo, hi] = std::minmax_element(base_offsets.begin(), base_offsets.end());
    std::vector<int64_t> position(base_offsets.empty() ? 0 : static_cast<size_t>(*hi - *lo + 1), -1);
    for (size_t r = 0; r < base_offsets.size(); ++r) position[base_offsets[r] - *lo] = static_cast<int64_t>(r);
    for (size_t k = 0; k < out.size(); ++k) {
      const int64_t at = offsets[k] - *lo;
      out[k] = at >= 0 && at < static_cast<int64_t>(position.size()) ? position[at] : -1;
    }
  }
  const int64_t base_numel = numel_of(base.shape);
  for (int64_t p : out)
    TINYDDP_INTERNAL_ASSERT(p >= 0 && p < base_numel, "a view reaches outside its base's elements");
  return from_vector(out, view.shape, DType::i64);
}

// CopySlices: the history of a base after an in-place op wrote through one of its views. Its inputs are the base's
// history before the write (input 0) and the op's other inputs (fn's inputs 1...); fn, the op's node, is applied
// by hand to the part of the gradient that falls on the view and is never run by the engine itself (its own edge 0,
// the view's history before the write, is not followed: the base's old history stands for it).
class CopySlices : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn)
      : base_(geometry_of(base)), view_(geometry_of(view)), fn_(std::move(fn)) {
    auto& edges = mutable_next_edges();
    edges.push_back(gradient_edge(base));
    for (size_t i = 1; i < fn_->next_edges().size(); ++i) edges.push_back(fn_->next_edges()[i]);
  }

  std::string name() const override { return "CopySlices"; }

  // grad: the gradient of the base after the write. The view's part goes through fn: fn's gradient for the view's
  // old values replaces it (input 0 gets the rest as is), fn's gradients for its other inputs go to them.
  TensorList apply(TensorList&& grads) override {
    TINYDDP_CHECK(fn_ != nullptr, kBackwardTwiceMessage);
    TensorList out(next_edges().size());
    const Tensor& grad = grads[0];
    if (!grad.defined()) return out;
    const Tensor where = positions(base_, view_);
    const Tensor flat = reshape(grad, {-1});
    TensorList res = fn_->apply({index(flat, {where})});
    if (needs_input_grad(0)) {
      const Tensor written = res.empty() || !res[0].defined() ? zeros({}, flat.dtype(), flat.device())
                                                              : to_dtype(res[0], flat.dtype());
      out[0] = reshape(index_put(flat, {where}, written), base_.shape);
    }
    for (size_t i = 1; i < out.size() && i < res.size(); ++i) out[i] = std::move(res[i]);
    return out;
  }

  // Drops fn, as 1.13's CopySlices::release_variables, without releasing fn's saved tensors: fn may be a node of
  // the same backward's graph too (a saved output of fn unpacks with fn as its history under create_graph), which
  // the engine then runs, after this node, with what it saved.
  void release_saved() override { release_node(std::move(fn_)); }

 private:
  Geometry base_;   // the base when the view was written
  Geometry view_;   // the written view
  std::shared_ptr<Node> fn_;
};

// The history of a view whose base changed in place since: the view read as a strided window of the base, so its
// gradient lands on the positions it covers (summed where it covers one element twice, as an expanded view does).
std::shared_ptr<Node> as_strided_backward(const Tensor& base, const Geometry& view) {
  auto node = std::make_shared<OpNode>(
      "AsStridedBackward0", [base_geometry = geometry_of(base), view](const TensorList& g, OpNode&) {
        const Tensor flat = zeros({numel_of(base_geometry.shape)}, g[0].dtype(), g[0].device());
        return TensorList{reshape(index_put(flat, {positions(base_geometry, view)}, g[0], /*accumulate=*/true),
                                  base_geometry.shape)};
      });
  node->mutable_next_edges().push_back(gradient_edge(base));
  return node;
}

// 1.13's refusal of an in-place op that writes through a view made under no_grad or inference mode, by a
// multi-output op or inside a custom Function, directly or (`indirect`) through its base or another view of it
// (its handle_view_on_rebase, with its texts).
void check_view_creation(const TensorImpl& view, bool indirect) {
  const ViewCreation creation = view.view_creation;
  if (creation == ViewCreation::normal) return;
  const char* modified = indirect ? "its base or another view of its base has been" : "is being";
  using tinyddp::detail::concat;
  std::string msg;
  if (creation == ViewCreation::inference_mode || creation == ViewCreation::no_grad_mode || !view.grad_fn) {
    const std::string prefix = view.grad_fn ? concat("Output ", view.output_nr, " of ", view.grad_fn->name(),
                                                     " is a view of a view which was created in")
                                            : std::string("A view was created in");
    msg = creation == ViewCreation::inference_mode
              ? concat(prefix, " inference mode and ", modified, " modified inplace in normal mode.")
              : concat(prefix, " no_grad mode and ", modified, " modified inplace with grad mode enabled.");
  } else {
    msg = concat("Output ", view.output_nr, " of ", view.grad_fn->name(), " is a view and ", modified,
                 " modified inplace.");
  }
  switch (creation) {
    case ViewCreation::multi_output:
      msg += " This view is the output of a function that returns multiple views. Such functions do not allow the "
             "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.";
      break;
    case ViewCreation::no_grad_mode:
      msg += " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
             "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
             "inplace to be tracked) or both outside (if you want the inplace to be tracked).";
      break;
    case ViewCreation::inference_mode:
      msg += " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
             "moving both the view and the inplace either both inside the inference_mode block (if you don't want "
             "the inplace to be tracked) or both outside (if you want the inplace to be tracked).";
      break;
    case ViewCreation::in_custom_function:
      msg += " This view was created inside a custom Function (or because an input was returned as-is) and the "
             "autograd logic to handle view+inplace would override the custom backward associated with the custom "
             "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
             "output of the custom Function.";
      break;
    case ViewCreation::normal:
      break;
  }
  throw Error(msg);
}

}  // namespace

void move_retains_grad_hook(const TensorImpl& self, Node* old_fn, uint32_t old_output_nr) {
  if (!self.retains_grad || !old_fn) return;
  NodePreHook hook = old_fn->pop_retains_grad_hook(old_output_nr);
  if (hook) self.grad_fn->set_retains_grad_hook(self.output_nr, std::move(hook));
}

void mark_view(const Tensor& out, const Tensor& base, bool multi_output) {
  TensorImpl& view = *out.impl();
  view.view_base = base.is_view() ? base.view_base() : base;
  view.view_version = out.version();
  ViewCreation creation = InferenceMode::is_enabled() ? ViewCreation::inference_mode
                          : !GradMode::is_enabled()    ? ViewCreation::no_grad_mode
                          : multi_output               ? ViewCreation::multi_output
                                                       : ViewCreation::normal;
  // A view of a restricted view keeps the restriction, an inference-mode one whatever the new view's (PyTorch's
  // propagate_creation_meta).
  if (base.is_view()) {
    const ViewCreation before = base.impl()->view_creation;
    if (creation == ViewCreation::normal || before == ViewCreation::inference_mode) creation = before;
  }
  view.view_creation = creation;
}

void check_inplace(const Tensor& self, bool records) {
  if (!records) return;
  if (self.is_view()) {
    check_view_creation(*self.impl(), /*indirect=*/false);
    TINYDDP_CHECK(!(self.requires_grad() && self.view_base().is_leaf()),
                  "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  TINYDDP_CHECK(!(self.requires_grad() && self.is_leaf()),
                "a leaf Variable that requires grad is being used in an in-place operation.");
}

void rebase_history(const Tensor& self, std::shared_ptr<Node> fn) {
  TINYDDP_INTERNAL_ASSERT(fn != nullptr, "rebase_history without a node");
  if (self.is_view()) {
    TINYDDP_CHECK(fn->num_inputs() == 1, "Functions which modify views in-place must return a single Variable");
    TensorImpl& base = *self.view_base().impl();
    base.grad_fn = std::make_shared<CopySlices>(self.view_base(), self, std::move(fn));
    base.output_nr = 0;
    // The view's own history, rebuilt now: AsStridedBackward0 of CopySlices, even where it was read since the write
    // bumped the version (a custom Function's dirty input is bumped before its wrapping reads it).
    {
      std::lock_guard<std::mutex> lock(self.impl()->view_mutex);
      self.impl()->view_version = std::numeric_limits<uint64_t>::max();
    }
    (void)self.grad_fn();
    return;
  }
  TensorImpl& impl = *self.impl();
  std::shared_ptr<Node> old = std::move(impl.grad_fn);
  const uint32_t old_output_nr = impl.output_nr;
  impl.grad_fn = std::move(fn);
  impl.output_nr = 0;
  move_retains_grad_hook(impl, old.get(), old_output_nr);
}

void set_inplace_view_history(const Tensor& self, std::shared_ptr<Node> fn) {
  TensorImpl& impl = *self.impl();
  std::lock_guard<std::mutex> lock(impl.view_mutex);
  std::shared_ptr<Node> old = std::move(impl.grad_fn);
  const uint32_t old_output_nr = impl.output_nr;
  impl.grad_fn = std::move(fn);
  impl.output_nr = 0;
  impl.view_version = self.version();   // a view's history is now this node, not a rebuild from its base
  move_retains_grad_hook(impl, old.get(), old_output_nr);
}

Tensor base_positions(const Tensor& base, const Tensor& view) { return positions(geometry_of(base), geometry_of(view)); }

}  // namespace tinyddp::autograd

namespace tinyddp {

// A view's history is rebuilt when its base changed in place since its grad_fn was set (Note [In-place ops under
// autograd]): then the view's values went through that write, and its gradient must too. A view whose base does
// not require grad and that has no history keeps none.
const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  TensorImpl& impl = *impl_;
  if (!impl.view_base.defined()) return impl.grad_fn;
  std::lock_guard<std::mutex> lock(impl.view_mutex);
  if (!impl.grad_fn && !impl.view_base.requires_grad()) return impl.grad_fn;
  const uint64_t now = impl.version->load();
  if (impl.view_version == now) return impl.grad_fn;
  autograd::check_view_creation(impl, /*indirect=*/true);
  std::shared_ptr<autograd::Node> old = std::move(impl.grad_fn);
  const uint32_t old_output_nr = impl.output_nr;
  impl.grad_fn = autograd::as_strided_backward(impl.view_base, autograd::geometry_of(*this));
  impl.output_nr = 0;
  impl.view_version = now;
  autograd::move_retains_grad_hook(impl, old.get(), old_output_nr);   // .grad follows the view's new history
  return impl.grad_fn;
}

}  // namespace tinyddp
