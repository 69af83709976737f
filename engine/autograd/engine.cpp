#include "engine/autograd/engine.h"

#include <cmath>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/trace.h"
#include "engine/autograd/anomaly_mode.h"
#include "engine/autograd/grad_mode.h"
#include "engine/ops/ops.h"

namespace tinyddp::autograd {

namespace {

// Hands the root gradients to the roots: the single entry point of every graph task.
class GraphRoot : public Node {
 public:
  GraphRoot(const std::vector<Edge>& roots, TensorList grads) : grads_(std::move(grads)) {
    mutable_next_edges() = roots;
    set_num_inputs(0);
  }
  std::string name() const override { return "GraphRoot"; }
  TensorList apply(TensorList&&) override { return grads_; }

 private:
  TensorList grads_;
};

// The state of one backward call. Lives on the calling thread's stack.
struct GraphTask {
  bool keep_graph = false;
  std::unordered_map<Node*, int> dependencies;        // edges still to deliver a gradient to each node
  std::unordered_map<Node*, TensorList> input_buffers;   // gradients received so far, per node input
  // Non-empty when execution is restricted (autograd::grad or backward(inputs=...)).
  std::unordered_set<Node*> needed;
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;   // (input_nr, output slot)
  bool restricted = false;
  TensorList captured;
  std::vector<std::function<void()>> final_callbacks;
};

thread_local GraphTask* current_task = nullptr;

// Ready nodes: highest sequence number first (AccumulateGrad has the maximum). std::priority_queue over
// the same comparator and push order as PyTorch's ReadyQueue, so that ties (several AccumulateGrad nodes
// ready at once) break the same way.
struct ReadyItem {
  std::shared_ptr<Node> node;
};
struct LowerSequenceNr {
  bool operator()(const ReadyItem& a, const ReadyItem& b) const { return a.node->sequence_nr() < b.node->sequence_nr(); }
};

// Anomaly mode (anomaly_mode.h): PyTorch's text, raised at the node whose output holds the first NaN.
void check_no_nan(const Node& fn, const TensorList& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined() || !is_floating(outputs[i].dtype())) continue;
    for (double v : outputs[i].to_vector<double>()) {
      TINYDDP_CHECK(!std::isnan(v), "Function '", fn.name(), "' returned nan values in its ", i, "th output.");
    }
  }
}

void count_dependencies(Node* root, GraphTask& task) {
  std::unordered_set<Node*> seen{root};
  std::vector<Node*> stack{root};
  while (!stack.empty()) {
    Node* fn = stack.back();
    stack.pop_back();
    for (const Edge& e : fn->next_edges()) {
      if (!e.valid()) continue;
      task.dependencies[e.node.get()] += 1;
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }
}

// Marks the nodes that lie on a path from the root to one of `inputs` (PyTorch's exec_info).
void mark_needed(Node* root, const std::vector<Edge>& inputs, bool accumulate_grad, GraphTask& task) {
  task.restricted = true;
  std::unordered_set<Node*> targets;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Edge& e = inputs[i];
    if (!e.valid()) continue;
    targets.insert(e.node.get());
    if (accumulate_grad) {
      task.needed.insert(e.node.get());   // backward(inputs=...): run those AccumulateGrad nodes
    } else {
      task.captures[e.node.get()].push_back({e.input_nr, i});
    }
  }
  // Post-order DFS: a node is needed if any child is needed or is a capture target.
  std::unordered_map<Node*, int> state;   // 0 unvisited, 1 on stack, 2 done
  std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
  state[root] = 1;
  while (!stack.empty()) {
    auto& [fn, child] = stack.back();
    const auto& edges = fn->next_edges();
    if (child < edges.size()) {
      Node* next = edges[child++].node.get();
      if (next && state[next] == 0) {
        state[next] = 1;
        stack.push_back({next, 0});
      }
      continue;
    }
    bool needed = task.needed.count(fn) > 0;
    for (const Edge& e : edges)
      if (e.valid() && (task.needed.count(e.node.get()) || targets.count(e.node.get()))) needed = true;
    if (needed) task.needed.insert(fn);
    state[fn] = 2;
    stack.pop_back();
  }
}

void run_final_callbacks(GraphTask& task) {
  // Index loop: a callback may queue further callbacks.
  for (size_t i = 0; i < task.final_callbacks.size(); ++i) {
    auto cb = std::move(task.final_callbacks[i]);
    cb();
  }
}

// Restores the thread's previous graph task (nested backwards, e.g. a backward inside a hook).
struct CurrentTaskGuard {
  explicit CurrentTaskGuard(GraphTask* t) : prev(current_task) { current_task = t; }
  ~CurrentTaskGuard() { current_task = prev; }
  GraphTask* prev;
};

}  // namespace

TensorList Engine::execute(const std::vector<Edge>& roots, const TensorList& root_grads,
                           const ExecuteOptions& options) {
  GraphTask task;
  task.keep_graph = options.keep_graph;
  auto graph_root = std::make_shared<GraphRoot>(roots, root_grads);
  count_dependencies(graph_root.get(), task);
  if (!options.inputs.empty()) {
    mark_needed(graph_root.get(), options.inputs, options.accumulate_grad, task);
    task.captured.resize(options.inputs.size());
  }

  CurrentTaskGuard task_guard(&task);
  AutoGradMode grad_mode(options.create_graph);   // backward rules record a graph only with create_graph

  std::priority_queue<ReadyItem, std::vector<ReadyItem>, LowerSequenceNr> ready;
  ready.push({graph_root});
  while (!ready.empty()) {
    std::shared_ptr<Node> fn = ready.top().node;
    ready.pop();
    TensorList inputs;
    if (auto it = task.input_buffers.find(fn.get()); it != task.input_buffers.end()) {
      inputs = std::move(it->second);
      task.input_buffers.erase(it);
    }
    inputs.resize(fn->num_inputs());

    bool pre_hooks_ran = false;   // a node both captured and needed runs its hooks once, not twice
    if (task.restricted) {
      if (auto it = task.captures.find(fn.get()); it != task.captures.end()) {
        fn->run_pre_hooks(inputs);
        pre_hooks_ran = true;
        for (auto [input_nr, slot] : it->second) task.captured[slot] = inputs[input_nr];
      }
      if (fn != graph_root && !task.needed.count(fn.get())) continue;
    }

    if (!pre_hooks_ran) fn->run_pre_hooks(inputs);
    // Trace: one span per node, around apply and the post hooks (the DDP reducer's hook nests in AccumulateGrad's).
    auto span = trace::span([&] {
      const std::string name = fn->name();
      return trace::What{name == "AccumulateGrad" ? "accumulate_grad" : "autograd", name,
                         {{"seq", static_cast<int64_t>(fn->sequence_nr())}}};
    });
    TensorList outputs = fn->apply(std::move(TensorList(inputs)));
    if (!task.keep_graph) fn->release_saved();
    if (is_anomaly_enabled()) check_no_nan(*fn, outputs);
    fn->run_post_hooks(outputs, inputs);

    const auto& edges = fn->next_edges();
    TINYDDP_INTERNAL_ASSERT(outputs.size() == edges.size() || (outputs.empty() && edges.empty()),
                            fn->name(), " produced ", outputs.size(), " gradients for ", edges.size(), " edges.");
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      Node* next = e.node.get();
      if (outputs[i].defined()) {
        TensorList& buffer = task.input_buffers[next];
        if (buffer.size() < next->num_inputs()) buffer.resize(next->num_inputs());
        Tensor& slot = buffer[e.input_nr];
        // Gradients reaching the same input are summed with an engine op (differentiable under create_graph).
        slot = slot.defined() ? slot + outputs[i] : outputs[i];
      }
      if (--task.dependencies[next] == 0) ready.push({e.node});
    }
  }
  run_final_callbacks(task);
  return std::move(task.captured);
}

void Engine::queue_callback(std::function<void()> callback) {
  TINYDDP_CHECK(current_task != nullptr, "Final callbacks can only be installed during backward pass.");
  current_task->final_callbacks.push_back(std::move(callback));
}

bool Engine::in_backward() { return current_task != nullptr; }

bool Engine::is_checkpoint_valid() { return current_task == nullptr || !current_task->restricted; }

}  // namespace tinyddp::autograd
