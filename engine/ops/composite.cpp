// composite(): an op composed of engine ops, recorded as the one node PyTorch 1.13 records (composite.h).
#include "engine/ops/composite.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "engine/autograd/engine.h"
#include "engine/autograd/grad_mode.h"
#include "engine/ops/ops.h"

namespace tinyddp {

using autograd::Edge;
using autograd::Node;
using autograd::TensorList;

namespace {

// The one node of a composite op. Holds the inner graph through the edges of the forward's outputs and the
// list of its nodes (Note [What a composite's inner graph is]); never the outputs themselves, whose storage is
// the user's to free.
class CompositeNode : public Node {
 public:
  CompositeNode(std::string name, std::vector<Edge> output_edges, std::vector<std::shared_ptr<Node>> inner)
      : name_(std::move(name)), output_edges_(std::move(output_edges)), inner_(std::move(inner)) {
    for (size_t i = 0; i < inner_.size(); ++i) index_.emplace(inner_[i].get(), static_cast<uint32_t>(i));
  }
  ~CompositeNode() override {
    output_edges_.clear();
    for (auto& n : inner_) autograd::release_node(std::move(n));
  }

  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override;
  // composite()'s saved_outputs: a detached alias of each (sharing its version counter) and its version then.
  void save_output(uint32_t output_nr, const Tensor& t) {
    saved_outputs_.push_back({output_nr, t.detach(), t.version(), {}, 0});
  }
  // composite()'s saved_inputs: the input itself (its history at the check names it, as 1.13's saved input).
  void save_input(const Tensor& t) { saved_inputs_.push_back({t, t.version(), t.output_nr()}); }
  // As SavedTensor::rebind_output: written through a view, the error names the view's history while it lives.
  void replace_saved_output(uint32_t output_nr, const Tensor& t) override {
    for (auto& s : saved_outputs_)
      if (s.output_nr == output_nr && s.alias.defined())
        s = {output_nr, t.detach(), t.version(), t.is_view() ? t.grad_fn() : nullptr, t.output_nr()};
  }
  // Note [Releasing a composite's inner graph]: under create_graph, an inner rule's saved tensors (an inner
  // op's output, say) enter the graph of the gradients with their inner grad_fn, so a later backward through that
  // graph reaches inner nodes both through this node and directly; one real 1.13 node would be run once there.
  // The engine runs this node before any of its inner nodes (its sequence number is higher), so releasing the
  // inner nodes' saved tensors when the backward ends, not when this node has run, lets the direct paths read
  // them; a backward after that raises PyTorch's text wherever an inner rule needs a saved tensor.
  void release_saved() override {
    for (auto& s : saved_outputs_) s.alias = Tensor();
    for (auto& s : saved_inputs_) s.input = Tensor();
    if (!autograd::Engine::in_backward()) {
      for (const auto& n : inner_) n->release_saved();
      return;
    }
    autograd::Engine::queue_callback([inner = inner_] {
      for (const auto& n : inner) n->release_saved();
    });
  }

 private:
  // The composite's next edge that `e` (an edge leaving the inner graph) is, or -1.
  int64_t input_of(const Edge& e) const {
    const auto& edges = next_edges();
    for (size_t i = 0; i < edges.size(); ++i)
      if (edges[i].node == e.node && edges[i].input_nr == e.input_nr) return static_cast<int64_t>(i);
    return -1;
  }
  uint32_t inner_index(const Node* n) const {
    const auto it = index_.find(n);
    return it == index_.end() ? kOutside : it->second;
  }
  static constexpr uint32_t kOutside = ~uint32_t{0};

  struct Run;   // one backward's state, for the inner nodes' needs_input_grad (see apply)
  static bool executes(const void* run, const Node* next);

  struct SavedOutput {
    uint32_t output_nr;
    Tensor alias;       // undefined once released (the inner nodes then raise the second-backward error)
    uint64_t version;
    std::weak_ptr<Node> view_fn;   // written in place through a view: that view's history then
    uint32_t view_output_nr;
  };

  struct SavedInput {
    Tensor input;       // undefined once released
    uint64_t version;
    uint32_t output_nr;
  };

  std::string name_;
  std::vector<SavedOutput> saved_outputs_;
  std::vector<SavedInput> saved_inputs_;
  std::vector<Edge> output_edges_;                // per forward output: the inner edge its gradient enters by
  std::vector<std::shared_ptr<Node>> inner_;      // the inner graph's nodes
  std::unordered_map<const Node*, uint32_t> index_;
};

struct CompositeNode::Run {
  const CompositeNode* self;
  std::vector<uint8_t> reached;   // per inner node: on a path from an output that has a gradient
  std::vector<uint8_t> wanted;    // per composite input: needs_input_grad
};

// While an inner node runs, its needs_input_grad(i) is false for an edge to an input the composite's own task
// does not want (Note [Gradients a restricted task does not need] in engine.cpp), so the rules skip that work.
bool CompositeNode::executes(const void* run, const Node* next) {
  const auto& r = *static_cast<const Run*>(run);
  const uint32_t k = r.self->inner_index(next);
  if (k != kOutside) return r.reached[k] != 0;
  const auto& edges = r.self->next_edges();
  for (size_t i = 0; i < edges.size(); ++i)
    if (edges[i].node.get() == next && r.wanted[i]) return true;
  return false;
}

// The engine's loop over the inner graph alone: ready nodes by highest sequence number first, gradients
// reaching one input summed with an engine op in the order they arrive, pre and post hooks run.
TensorList CompositeNode::apply(TensorList&& grads) {
  for (const SavedInput& s : saved_inputs_) {   // first, as 1.13's node unpacks what it saved before its rule
    if (!s.input.defined()) continue;
    const std::shared_ptr<Node>& fn = s.input.grad_fn();
    autograd::check_saved_version(s.input, s.version, fn ? autograd::torch_name(*fn) : "", s.output_nr);
  }
  for (const SavedOutput& s : saved_outputs_) {
    if (!s.alias.defined()) continue;
    const std::shared_ptr<Node> view_fn = s.view_fn.lock();
    autograd::check_saved_version(s.alias, s.version, view_fn ? autograd::torch_name(*view_fn) : name_,
                                  view_fn ? s.view_output_nr : s.output_nr);
  }
  const auto& edges = next_edges();
  TensorList result(edges.size());
  Run run{this, std::vector<uint8_t>(inner_.size(), 0), std::vector<uint8_t>(edges.size(), 0)};
  for (size_t i = 0; i < edges.size(); ++i) run.wanted[i] = needs_input_grad(i);

  const auto deliver_out = [&](const Edge& e, Tensor g) {
    const int64_t i = input_of(e);
    TINYDDP_INTERNAL_ASSERT(i >= 0, name_, ": a gradient left the inner graph by an edge that is not an input's.");
    if (!g.defined() || !run.wanted[i]) return;
    result[i] = result[i].defined() ? result[i] + g : std::move(g);
  };

  // The inner nodes reached from the outputs that have a gradient, and the edges pointing at each.
  std::vector<int> dependencies(inner_.size(), 0);
  std::vector<uint32_t> stack;
  for (size_t k = 0; k < grads.size() && k < output_edges_.size(); ++k) {
    if (!grads[k].defined() || !output_edges_[k].valid()) continue;
    const uint32_t n = inner_index(output_edges_[k].node.get());
    if (n != kOutside && !run.reached[n]) {
      run.reached[n] = 1;
      stack.push_back(n);
    }
  }
  while (!stack.empty()) {
    const uint32_t n = stack.back();
    stack.pop_back();
    for (const Edge& e : inner_[n]->next_edges()) {
      if (!e.valid()) continue;
      const uint32_t next = inner_index(e.node.get());
      if (next == kOutside) continue;
      dependencies[next] += 1;
      if (!run.reached[next]) {
        run.reached[next] = 1;
        stack.push_back(next);
      }
    }
  }

  std::vector<TensorList> slots(inner_.size());
  for (size_t n = 0; n < inner_.size(); ++n)
    if (run.reached[n]) slots[n].resize(inner_[n]->num_inputs());
  for (size_t k = 0; k < grads.size() && k < output_edges_.size(); ++k) {
    if (!grads[k].defined() || !output_edges_[k].valid()) continue;
    const Edge& e = output_edges_[k];
    const uint32_t n = inner_index(e.node.get());
    if (n == kOutside) {
      deliver_out(e, std::move(grads[k]));   // an output that is an input itself (or another output's view)
      continue;
    }
    Tensor& slot = slots[n][e.input_nr];
    slot = slot.defined() ? slot + grads[k] : std::move(grads[k]);
  }

  struct Ready {
    uint64_t sequence_nr;
    uint32_t index;
    bool operator<(const Ready& o) const { return sequence_nr < o.sequence_nr; }
  };
  std::vector<Ready> ready;
  for (size_t n = 0; n < inner_.size(); ++n)
    if (run.reached[n] && dependencies[n] == 0) ready.push_back({inner_[n]->sequence_nr(), static_cast<uint32_t>(n)});
  std::make_heap(ready.begin(), ready.end());

  struct FilterGuard {   // the composite's own filter back after each inner node, also on a throw
    autograd::detail::ExecFilter outer = autograd::detail::exec_filter;
    ~FilterGuard() { autograd::detail::exec_filter = outer; }
  } filter_guard;
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end());
    const uint32_t n = ready.back().index;
    ready.pop_back();
    Node* fn = inner_[n].get();
    TensorList inputs = std::move(slots[n]);
    fn->run_pre_hooks(inputs);
    autograd::detail::exec_filter = {fn, &run, &CompositeNode::executes};
    TensorList outputs = fn->has_post_hooks() ? fn->apply(TensorList(inputs)) : fn->apply(std::move(inputs));
    autograd::detail::exec_filter = filter_guard.outer;
    fn->run_post_hooks(outputs, inputs);
    const auto& next_edges = fn->next_edges();
    TINYDDP_INTERNAL_ASSERT(outputs.size() == next_edges.size(), fn->name(), " produced ", outputs.size(),
                            " gradients for ", next_edges.size(), " edges.");
    for (size_t i = 0; i < next_edges.size(); ++i) {
      const Edge& e = next_edges[i];
      if (!e.valid()) continue;
      const uint32_t next = inner_index(e.node.get());
      if (next == kOutside) {
        deliver_out(e, std::move(outputs[i]));
        continue;
      }
      if (outputs[i].defined()) {
        Tensor& slot = slots[next][e.input_nr];
        slot = slot.defined() ? slot + outputs[i] : std::move(outputs[i]);
      }
      if (--dependencies[next] == 0) {
        ready.push_back({inner_[next]->sequence_nr(), next});
        std::push_heap(ready.begin(), ready.end());
      }
    }
  }
  return result;
}

}  // namespace

TensorList composite(const std::string& name, const TensorList& inputs, const std::function<TensorList()>& forward,
                      const std::vector<size_t>& saved_outputs, const std::vector<size_t>& saved_inputs) {
  bool any = false;
  for (const Tensor& t : inputs) any |= t.defined() && t.requires_grad();
  if (!GradMode::is_enabled() || !any) return forward();

  // Nodes numbered before `first` existed before the forward ran (AccumulateGrad's number is the largest).
  const uint64_t first = autograd::next_sequence_nr();
  TensorList outputs = forward();

  std::vector<Edge> input_edges;
  input_edges.reserve(inputs.size());
  for (const Tensor& t : inputs) input_edges.push_back(autograd::gradient_edge(t));
  const auto is_input_node = [&](const Node* n) {
    return std::any_of(input_edges.begin(), input_edges.end(), [n](const Edge& e) { return e.node.get() == n; });
  };
  const auto is_inner = [&](const Node* n) {
    return n->sequence_nr() >= first && n->sequence_nr() != autograd::kAccumulateGradSequenceNr && !is_input_node(n);
  };
  const auto listed = [&](const Edge& e) {
    return std::any_of(input_edges.begin(), input_edges.end(), [&e](const Edge& in) {
      return in.node == e.node && in.input_nr == e.input_nr;
    });
  };

  // The inner graph (Note [What a composite's inner graph is]), walked from the outputs that require grad.
  std::vector<Edge> output_edges(outputs.size());
  std::vector<std::shared_ptr<Node>> inner;
  std::unordered_map<const Node*, bool> seen;
  bool any_output = false;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].defined() || !outputs[k].requires_grad()) continue;
    any_output = true;
    output_edges[k] = autograd::gradient_edge(outputs[k]);
    const Edge& e = output_edges[k];
    if (!is_inner(e.node.get())) {
      if (!listed(e)) return outputs;   // Note [What a composite's inner graph is]: the graph as recorded
    } else if (seen.emplace(e.node.get(), true).second) {
      inner.push_back(e.node);
    }
  }
  if (!any_output) return outputs;
  for (size_t next = 0; next < inner.size(); ++next) {   // inner grows while we walk it
    for (const Edge& e : inner[next]->next_edges()) {
      if (!e.valid()) continue;
      if (!is_inner(e.node.get())) {
        if (!listed(e)) return outputs;
      } else if (seen.emplace(e.node.get(), true).second) {
        inner.push_back(e.node);
      }
    }
  }

  auto node = std::make_shared<CompositeNode>(name, output_edges, std::move(inner));
  node->mutable_next_edges() = std::move(input_edges);
  for (size_t i : saved_inputs)
    if (i < inputs.size() && inputs[i].defined()) node->save_input(inputs[i]);
  node->set_num_inputs(static_cast<uint32_t>(outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!output_edges[k].valid()) continue;
    const Tensor& inner_out = outputs[k];
    Tensor out = make_view(inner_out, inner_out.shape(), inner_out.strides(), inner_out.offset());
    // The op's output is a view of an input: so is its handle (same base, same restrictions). A view of a tensor
    // the composition made (conv2d's reshaped product, a pool's strided windows) is no view in 1.13, whose op
    // returns a tensor of its own: an in-place op on it is recorded on it, not through CopySlices.
    const auto views_an_input = [&](const Tensor& t) {
      const TensorImpl* root = t.view_base().impl();
      return std::any_of(inputs.begin(), inputs.end(), [root](const Tensor& in) {
        return in.defined() && (in.impl() == root || (in.is_view() && in.view_base().impl() == root));
      });
    };
    if (inner_out.is_view() && views_an_input(inner_out)) {
      TensorImpl& impl = *out.impl();
      impl.view_base = inner_out.view_base();
      impl.view_version = inner_out.impl()->view_version;
      impl.view_creation = inner_out.impl()->view_creation;
    }
    autograd::set_history(out, node, static_cast<uint32_t>(k));
    if (std::find(saved_outputs.begin(), saved_outputs.end(), k) != saved_outputs.end())
      node->save_output(static_cast<uint32_t>(k), out);
    outputs[k] = std::move(out);
  }
  return outputs;
}

}  // namespace tinyddp
