#include "engine/autograd/node.h"

#include <sstream>

#include "engine/autograd/accumulate_grad.h"
#include "engine/autograd/grad_mode.h"
#include "engine/autograd/saved_tensor_hooks.h"

namespace tinyddp::autograd {

namespace {
thread_local uint64_t sequence_counter = 0;
}

uint64_t next_sequence_nr() { return sequence_counter++; }

thread_local detail::ExecFilter detail::exec_filter;

namespace {
thread_local std::vector<std::shared_ptr<Node>> nodes_to_release;
thread_local bool releasing = false;
}  // namespace

void release_node(std::shared_ptr<Node>&& node) {
  if (!node) return;
  if (node.use_count() > 1) {   // not the last reference: dropping it destroys nothing
    node.reset();
    return;
  }
  nodes_to_release.push_back(std::move(node));
  if (releasing) return;        // an outer call is draining the queue
  releasing = true;
  while (!nodes_to_release.empty()) {
    std::shared_ptr<Node> next = std::move(nodes_to_release.back());
    nodes_to_release.pop_back();
    next.reset();               // its destructor queues its own children instead of destroying them
  }
  releasing = false;
}

Node::~Node() {
  for (Edge& e : next_edges_) release_node(std::move(e.node));
}

void Node::run_pre_hooks(TensorList& grads) const {
  for (const PreHook& h : pre_hooks_) {
    if (h.input_nr >= grads.size() || !grads[h.input_nr].defined()) continue;
    Tensor replaced = h.hook(grads[h.input_nr]);
    if (replaced.defined()) grads[h.input_nr] = std::move(replaced);
  }
  for (const NodeListPreHook& hook : list_pre_hooks_) hook(grads);
}

void Node::set_retains_grad_hook(uint32_t input_nr, NodePreHook hook) {
  for (auto& h : pre_hooks_)
    if (h.retains_grad && h.input_nr == input_nr) {
      h.hook = std::move(hook);
      return;
    }
  pre_hooks_.push_back({input_nr, std::move(hook), true});
}

NodePreHook Node::pop_retains_grad_hook(uint32_t input_nr) {
  for (auto it = pre_hooks_.begin(); it != pre_hooks_.end(); ++it)
    if (it->retains_grad && it->input_nr == input_nr) {
      NodePreHook hook = std::move(it->hook);
      pre_hooks_.erase(it);
      return hook;
    }
  return nullptr;
}

void Node::run_post_hooks(const TensorList& outputs, const TensorList& inputs) const {
  for (const auto& hook : post_hooks_) hook(outputs, inputs);
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  if (t.grad_fn()) return {t.grad_fn(), t.output_nr()};
  return {grad_accumulator(t), 0};
}

std::string torch_name(const Node& n) {
  std::string name = n.name();
  return name == "AccumulateGrad" || name == "CopySlices" ? "torch::autograd::" + name : name;
}

void check_saved_version(const Tensor& data, uint64_t saved_version, const std::string& grad_fn_name,
                         uint32_t output_nr) {
  const uint64_t current = data.version();
  if (current == saved_version) return;
  std::ostringstream msg;
  msg << "one of the variables needed for gradient computation has been modified by an inplace operation: ["
      << legacy_type_name(data.dtype()) << " " << shape_str(data.shape()) << "]";
  if (!grad_fn_name.empty()) msg << ", which is output " << output_nr << " of " << grad_fn_name << ",";
  msg << " is at version " << current << "; expected version " << saved_version << " instead. ";
  if (is_anomaly_enabled()) {   // the front end has printed the failing node's forward stack above
    msg << "Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
           "variable in question was changed in there or anywhere later. Good luck!";
  } else {
    msg << "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
           "torch.autograd.set_detect_anomaly(True).";
  }
  throw Error(msg.str());
}

// ---- SavedTensor ----
const char* const kBackwardTwiceMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";

SavedTensor::SavedTensor(const Tensor& t, bool is_output)
    : is_output_(is_output), output_nr_(t.defined() ? t.output_nr() : 0), saved_version_(t.defined() ? t.version() : 0) {
  if (!t.defined()) return;
  TINYDDP_CHECK(!t.is_inference(), "Inference tensors cannot be saved for backward. To work around you can make a "
                                   "clone to get a normal tensor and use it in autograd.");
  defined_ = true;
  if (auto hooks = current_saved_tensor_hooks()) {
    // The history unpack gives back: an output's grad_fn is the saving node itself (unpack's owner).
    if (t.is_leaf()) {
      requires_grad_ = t.requires_grad();
      if (requires_grad_) grad_accumulator_ = grad_accumulator(t);
    } else if (!is_output) {
      grad_fn_ = t.grad_fn();
    }
    NoGradGuard no_grad;
    packed_ = hooks->pack(t);
    TINYDDP_CHECK(t.version() == saved_version_,
                  "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                  "can not be modified by in-place operations as this can lead to unexpected side-effects. Please "
                  "open an issue if you need to perform in-place operations on the input to a pack hook.");
    hooks_ = std::move(hooks);
    return;
  }
  // An op's own output would hold its grad_fn (the saving node) and so the node would own itself:
  // keep a history-free alias instead and restore the history in unpack().
  data_ = is_output ? t.detach() : t;
}

void SavedTensor::rebind_output(const Tensor& t) {
  if (!defined_ || released_ || hooks_) return;
  data_ = t.detach();
  saved_version_ = t.version();
  inplace_on_view_ = t.is_view();
  if (inplace_on_view_) {
    view_grad_fn_ = t.grad_fn();
    view_output_nr_ = t.output_nr();
  }
}

void SavedTensor::release() {
  data_ = Tensor();
  packed_.reset();
  hooks_.reset();
  grad_fn_.reset();
  released_ = true;
}

Tensor SavedTensor::unpack(Node& owner) const {
  if (!defined_) return Tensor();
  if (released_) throw Error(kBackwardTwiceMessage);
  if (hooks_) return unpack_hooked(owner);
  // An output written in place through a view keeps that view's history while the view lives (rebind_output).
  const std::shared_ptr<Node> view_fn = inplace_on_view_ ? view_grad_fn_.lock() : nullptr;
  if (data_.version() != saved_version_) {
    // The saved tensor's history now: a view whose base changed in place (an optimizer's step on W, saved as W.t()
    // by addmm) has had its grad_fn rebuilt as AsStridedBackward0 (Note [In-place ops under autograd]).
    const std::string grad_fn_name = view_fn            ? torch_name(*view_fn)
                                     : is_output_       ? torch_name(owner)
                                     : !data_.grad_fn() ? ""
                                                        : torch_name(*data_.grad_fn());
    check_saved_version(data_, saved_version_, grad_fn_name, view_fn ? view_output_nr_ : output_nr_);
  }
  if (!is_output_) return data_;
  Tensor out = make_view(data_, data_.shape(), data_.strides(), data_.offset());
  out.impl()->grad_fn = view_fn ? view_fn : owner.shared_from_this();
  out.impl()->output_nr = view_fn ? view_output_nr_ : output_nr_;
  return out;
}

// PyTorch 1.13 checks no version here: what unpack returns need not share the saved tensor's counter.
Tensor SavedTensor::unpack_hooked(Node& owner) const {
  const Tensor data = hooks_->unpack(packed_);
  TINYDDP_CHECK(data.defined(), "Output of saved tensor unpack_hook expected to be a Tensor but got an undefined "
                                "tensor; the unpack hook must return the tensor that pack's result stands for.");
  // A fresh handle on the unpacked data, with the saved tensor's history (never the hook's own tensor's).
  Tensor out = make_view(data, data.shape(), data.strides(), data.offset());
  TensorImpl& impl = *out.impl();
  if (is_output_) {
    impl.grad_fn = owner.shared_from_this();
    impl.output_nr = output_nr_;
  } else if (grad_fn_) {
    impl.grad_fn = grad_fn_;
    impl.output_nr = output_nr_;
  } else if (requires_grad_) {
    TINYDDP_INTERNAL_ASSERT(!grad_accumulator_.expired(), "No grad accumulator for a saved leaf");
    impl.requires_grad = true;
    impl.grad_accumulator = grad_accumulator_;   // gradients reach the saved leaf's .grad, not this handle's
  }
  return out;
}

// ---- OpNode ----
TensorList OpNode::apply(TensorList&& grads) {
  struct ClearUnpacked {   // also on a throw: an unpacked output holds this node
    TensorList& unpacked;
    ~ClearUnpacked() { unpacked.clear(); }
  } clear{unpacked_};
  // Unpacked first, whatever flows in, as PyTorch's generated apply() does: a node of a freed graph, or one
  // whose saved tensor changed in place, raises even when only undefined gradients reach it (an output the
  // loss does not use, through DDP's sink).
  unpacked_.reserve(saved_.size());
  for (const SavedTensor& s : saved_) unpacked_.push_back(s.unpack(*this));
  bool any_defined = false;
  for (const auto& g : grads) any_defined |= g.defined();
  if (!any_defined) return TensorList(next_edges().size());   // nothing flows: skip the rule
  TensorList out = rule_(grads, *this);
  TINYDDP_INTERNAL_ASSERT(out.size() == next_edges().size(), name(), " returned ", out.size(),
                          " gradients for ", next_edges().size(), " inputs.");
  return out;
}

void OpNode::release_saved() {
  for (auto& s : saved_) s.release();
}

void OpNode::replace_saved_output(uint32_t output_nr, const Tensor& t) {
  for (auto& s : saved_)
    if (s.is_output() && s.output_nr() == output_nr) s.rebind_output(t);
}

const Tensor& OpNode::saved(size_t i) const {
  TINYDDP_INTERNAL_ASSERT(i < unpacked_.size(), name(), ": saved(", i, ") outside its backward rule or past the ",
                          unpacked_.size(), " saved tensors.");
  return unpacked_[i];
}

size_t OpNode::save(const Tensor& t, bool is_output) {
  saved_.emplace_back(t, is_output);
  return saved_.size() - 1;
}

std::shared_ptr<OpNode> make_node(const char* name, const TensorList& inputs, OpNode::Rule rule) {
  if (!GradMode::is_enabled()) return nullptr;
  bool any = false;
  for (const auto& t : inputs) any |= t.defined() && t.requires_grad();
  if (!any) return nullptr;
  auto node = std::make_shared<OpNode>(name, std::move(rule));
  auto& edges = node->mutable_next_edges();
  edges.reserve(inputs.size());
  for (const auto& t : inputs) edges.push_back(gradient_edge(t));
  return node;
}

void set_history(const Tensor& output, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  if (!node) return;
  output.impl()->grad_fn = node;
  output.impl()->output_nr = output_nr;
}

}  // namespace tinyddp::autograd

namespace tinyddp {
// A tensor owns its grad_fn; dropping the last tensor of a long graph releases the graph through
// release_node, iteratively, so a deep chain does not overflow the stack. Defined here, not in core/, because
// releasing a graph is autograd's job.
TensorImpl::~TensorImpl() { autograd::release_node(std::move(grad_fn)); }
}  // namespace tinyddp
