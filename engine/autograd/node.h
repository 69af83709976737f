// The autograd graph.
//
// A Node is one backward function: it takes the gradients of its forward op's outputs ("inputs" of the
// node) and returns the gradients of the forward op's inputs ("outputs" of the node), which flow along
// next_edges to the nodes that produced those inputs. Edge{node, input_nr} says "this gradient is input
// number input_nr of that node". Leaves end in an AccumulateGrad node that writes .grad.
//
//   y = tanh(x @ w)       x, w leaves         MmBackward0 --> AccumulateGrad(w)
//   y.sum().backward()    SumBackward0 --> TanhBackward0 --^  (x does not require grad: invalid edge)
//
// Every backward rule is written with engine ops (engine/ops), never with raw buffers. With create_graph
// the engine runs the rules with grad mode on, so the backward records a graph of its own and can be
// differentiated again, to any order.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/autograd/anomaly_mode.h"
#include "engine/core/tensor.h"

namespace tinyddp::autograd {

using TensorList = std::vector<Tensor>;

class Node;

struct Edge {
  std::shared_ptr<Node> node;   // null: no gradient flows here (the input did not require grad)
  uint32_t input_nr = 0;
  bool valid() const { return node != nullptr; }
};

// Sequence numbers order the engine's ready queue: the most recently created node runs first. They are
// per thread, as in PyTorch, so that ranks running as threads number their graphs independently.
uint64_t next_sequence_nr();
constexpr uint64_t kAccumulateGradSequenceNr = std::numeric_limits<uint64_t>::max();   // runs first

// Pre-hook: may replace the gradient arriving at input `input_nr` (tensor hooks on non-leaves live here).
using NodePreHook = std::function<Tensor(const Tensor& grad)>;
// Pre-hook over all of a node's incoming gradients (Python's grad_fn.register_prehook): may replace any of them
// (undefined where none arrived); runs after the per-input pre-hooks.
using NodeListPreHook = std::function<void(TensorList& grads)>;
// Post-hook: sees the node's outputs (gradients for its next edges) and inputs after it ran.
using NodePostHook = std::function<void(const TensorList& outputs, const TensorList& inputs)>;

namespace detail {
// Set by the engine around the apply of a node in a restricted task (Note [Gradients a restricted task does
// not need] in engine.cpp): the running node, and whether the task executes a given next node.
struct ExecFilter {
  const Node* running = nullptr;
  const void* task = nullptr;
  bool (*executes)(const void* task, const Node* next) = nullptr;
};
extern thread_local ExecFilter exec_filter;
}  // namespace detail

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(uint64_t sequence_nr = next_sequence_nr()) : sequence_nr_(sequence_nr) {
    if (is_anomaly_enabled()) detail::anomaly_node_created(*this);   // the front end records the forward's stack
  }
  // Releases the next edges iteratively: see release_node.
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  // grads[i]: gradient w.r.t. forward output i (undefined when none arrived). Returns one gradient per
  // next edge (undefined where none is needed).
  virtual TensorList apply(TensorList&& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_saved() {}
  // Output `output_nr` was saved, and an in-place op then wrote it into `t` (Note [In-place ops under autograd]):
  // t is what the node must find unchanged at its backward.
  virtual void replace_saved_output(uint32_t output_nr, const Tensor& t) { (void)output_nr, (void)t; }

  uint64_t sequence_nr() const { return sequence_nr_; }
  uint32_t num_inputs() const { return num_inputs_; }
  void set_num_inputs(uint32_t n) { num_inputs_ = n; }
  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  // Whether the gradient for forward input i is wanted: its edge is valid and, while the engine runs this
  // node for autograd::grad or backward(inputs=...), leads to a node that runs. Lets rules skip work.
  bool needs_input_grad(size_t i) const {
    if (i >= next_edges_.size() || !next_edges_[i].valid()) return false;
    const detail::ExecFilter& f = detail::exec_filter;
    return f.running != this || f.executes(f.task, next_edges_[i].node.get());
  }

  void add_pre_hook(uint32_t input_nr, NodePreHook hook) { pre_hooks_.push_back({input_nr, std::move(hook), false}); }
  // retain_grad's hook for input `input_nr` (at most one per input): a pre-hook, run in its place among the others
  // (.grad sees what the hooks registered before it made), that an in-place op on the tensor moves to the
  // tensor's new node (1.13's retains_grad hook).
  void set_retains_grad_hook(uint32_t input_nr, NodePreHook hook);
  NodePreHook pop_retains_grad_hook(uint32_t input_nr);
  void add_list_pre_hook(NodeListPreHook hook) { list_pre_hooks_.push_back(std::move(hook)); }
  void add_post_hook(NodePostHook hook) { post_hooks_.push_back(std::move(hook)); }
  bool has_post_hooks() const { return !post_hooks_.empty(); }
  // A front end's own data about this node (Python's grad_fn.metadata dict), kept as long as the node lives; the
  // engine never reads it. Empty until the front end sets it.
  std::any& front_end_data() { return front_end_data_; }
  // Applies pre-hooks to the gradients arriving at this node: the per-input ones, then the list ones.
  void run_pre_hooks(TensorList& grads) const;
  void run_post_hooks(const TensorList& outputs, const TensorList& inputs) const;

 private:
  uint64_t sequence_nr_;
  uint32_t num_inputs_ = 1;
  std::vector<Edge> next_edges_;
  struct PreHook {
    uint32_t input_nr;
    NodePreHook hook;
    bool retains_grad;   // set_retains_grad_hook's
  };
  std::vector<PreHook> pre_hooks_;
  std::vector<NodeListPreHook> list_pre_hooks_;
  std::vector<NodePostHook> post_hooks_;
  std::any front_end_data_;
};

// What 1.13's Node::name() says of `n`, in its errors and in Python's grad_fn.name(): the nodes that exist only in C++
// there carry their namespace ("torch::autograd::AccumulateGrad", "torch::autograd::CopySlices"); reprs and
// type(grad_fn).__name__ show the bare name, which is Node::name().
std::string torch_name(const Node& n);

// Drops a reference to a node without recursing: a graph is a chain of shared_ptrs, and destroying a
// million-node chain recursively overflows the stack (PyTorch's deleteNode solves the same problem). Nodes
// whose last reference goes are queued and destroyed one at a time by the outermost caller.
void release_node(std::shared_ptr<Node>&& node);

// The edge a gradient for `t` must flow along: its grad_fn, or (for a leaf that requires grad) its
// AccumulateGrad node; invalid when t does not require grad.
Edge gradient_edge(const Tensor& t);

// A tensor saved for backward. Remembers the version at save time so that an in-place change before the
// backward is caught (PyTorch's "modified by an inplace operation" error), and can be released after use.
// An op's own output is saved without its grad_fn (the node would otherwise own itself) and gets it back
// when unpacked. Under saved-tensor hooks (saved_tensor_hooks.h) it keeps what the pack hook returned and
// the tensor's history instead of the tensor, and unpacks through the unpack hook.
struct SavedTensorHooks;

// PyTorch's text for a backward through a graph whose saved tensors were freed.
extern const char* const kBackwardTwiceMessage;

// PyTorch's check that a saved tensor was not modified in place since it was saved: throws "one of the variables
// needed for gradient computation has been modified by an inplace operation: ..." naming `grad_fn_name` (empty for
// a leaf) and output_nr, when `data`'s version is no longer `saved_version`.
void check_saved_version(const Tensor& data, uint64_t saved_version, const std::string& grad_fn_name,
                         uint32_t output_nr);

class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t, bool is_output);
  // `owner` is the node that saved this tensor (an output gets owner as its grad_fn back).
  Tensor unpack(Node& owner) const;
  void release();
  bool is_output() const { return is_output_; }
  uint32_t output_nr() const { return output_nr_; }
  // An output saved, then written into `t` by an in-place op (after t took its new history): t, at its version now,
  // is what unpack checks. Under saved-tensor hooks the packed value stays (the values are the same; pack is not
  // called twice). When t is a view, 1.13 unpacks it with t's history of then (AsStridedBackward0 over CopySlices),
  // held weakly: while t lives, the saved tensor's gradient flows through its base's history; once t is gone, it
  // flows through the saving node, as for any output (and the version error names that node).
  void rebind_output(const Tensor& t);

 private:
  Tensor unpack_hooked(Node& owner) const;

  Tensor data_;             // the tensor itself; for an op's own output, a detached alias (same version counter)
  std::weak_ptr<Node> view_grad_fn_;            // rebind_output of a view: its history then
  uint32_t view_output_nr_ = 0;
  bool inplace_on_view_ = false;
  bool is_output_ = false;
  uint32_t output_nr_ = 0;
  uint64_t saved_version_ = 0;
  bool released_ = false;
  bool defined_ = false;    // false: nothing was saved (an unneeded input), unpacked as undefined even after release
  // With hooks: the pair that packed the tensor, what pack returned, and the history unpack restores.
  std::shared_ptr<const SavedTensorHooks> hooks_;
  std::any packed_;
  std::shared_ptr<Node> grad_fn_;               // a non-leaf that is not the saving node's output
  std::weak_ptr<Node> grad_accumulator_;        // a leaf that requires grad (the graph keeps it alive)
  bool requires_grad_ = false;
};

// The node of an ordinary op: a name (PyTorch's, e.g. "MulBackward0"), saved tensors, and a backward
// rule written with engine ops. The rule reads saved tensors through saved(i) and must not capture
// tensors in its closure (that would dodge release and could make the graph own itself).
class OpNode : public Node {
 public:
  using Rule = std::function<TensorList(const TensorList& grads, OpNode& self)>;
  OpNode(std::string name, Rule rule) : name_(std::move(name)), rule_(std::move(rule)) {}

  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override;
  void release_saved() override;
  void replace_saved_output(uint32_t output_nr, const Tensor& t) override;

  size_t save(const Tensor& t, bool is_output = false);   // returns the index for saved()
  // Saved tensor i, inside the rule. Every saved tensor is unpacked once, in save order, before the rule
  // runs (as PyTorch's generated nodes do), so unpack hooks see one call each however often a rule reads it.
  const Tensor& saved(size_t i) const;

 private:
  std::string name_;
  Rule rule_;
  std::vector<SavedTensor> saved_;
  TensorList unpacked_;   // saved_, unpacked; only while the rule runs (an unpacked output holds this node)
};

// Wires a new op's node into the graph when grad mode is on and some input requires grad; returns the
// node (null when no graph is recorded). The caller saves what the rule needs, then calls set_history.
std::shared_ptr<OpNode> make_node(const char* name, const TensorList& inputs, OpNode::Rule rule);
void set_history(const Tensor& output, const std::shared_ptr<Node>& node, uint32_t output_nr = 0);

}  // namespace tinyddp::autograd
