#include "engine/autograd/engine.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <vector>

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

// Ready nodes: highest sequence number first (AccumulateGrad has the maximum). A heap (std::push_heap and
// pop_heap, what std::priority_queue is made of) over the same comparator and push order as PyTorch's
// ReadyQueue, so that ties (several AccumulateGrad nodes ready at once) break the same way.
struct ReadyItem {
  uint64_t sequence_nr;
  uint32_t index;
};
struct LowerSequenceNr {
  bool operator()(const ReadyItem& a, const ReadyItem& b) const { return a.sequence_nr < b.sequence_nr; }
};

// Node* -> the node's dense index in its task: open addressing with linear probing, at most half full. The
// task's one map, built once per backward and read once per edge; it allocates nothing per node (an
// unordered_map allocates one entry each, and freeing ten thousand of them after each backward was a tenth of
// the engine's time). Entries carry the generation of the task that wrote them, so reusing the map for the
// next backward (GraphTaskPool) is a counter bump, not a clear of the whole table.
class NodeIndex {
 public:
  static constexpr uint32_t kAbsent = std::numeric_limits<uint32_t>::max();

  void start_over() {
    size_ = 0;
    if (++generation_ == 0) {   // wrapped: stale stamps could read as current, so clear them for real
      std::fill(entries_.begin(), entries_.end(), Entry{});
      generation_ = 1;
    }
  }
  // The index of `node`, inserting `index` for it if absent; .second says whether it was inserted.
  std::pair<uint32_t, bool> emplace(const Node* node, uint32_t index) {
    if (2 * (size_ + 1) > entries_.size()) grow();
    Entry& e = probe(node);
    if (e.generation == generation_) return {e.index, false};
    e = Entry{node, index, generation_};
    ++size_;
    return {index, true};
  }
  uint32_t find(const Node* node) const {
    if (entries_.empty()) return kAbsent;
    const Entry& e = const_cast<NodeIndex*>(this)->probe(node);
    return e.generation == generation_ ? e.index : kAbsent;
  }

 private:
  struct Entry {
    const Node* node = nullptr;
    uint32_t index = 0;
    uint32_t generation = 0;   // current iff == generation_; 0 is never current
  };
  // The entry holding `node`, or the free one where it belongs.
  Entry& probe(const Node* node) {
    const size_t mask = entries_.size() - 1;
    // Fibonacci hashing: nodes are heap objects, so the low bits of their addresses are mostly equal.
    size_t i = (reinterpret_cast<uintptr_t>(node) * 0x9E3779B97F4A7C15ull) >> shift_;
    while (entries_[i].generation == generation_ && entries_[i].node != node) i = (i + 1) & mask;
    return entries_[i];
  }
  void grow() {
    std::vector<Entry> old = std::move(entries_);
    const size_t capacity = std::max<size_t>(64, 2 * old.size());
    entries_.assign(capacity, Entry{});
    shift_ = 64 - std::countr_zero(capacity);
    for (const Entry& e : old) {
      if (e.generation == generation_) probe(e.node) = e;
    }
  }

  std::vector<Entry> entries_;   // size a power of two
  int shift_ = 64;
  size_t size_ = 0;
  uint32_t generation_ = 1;
};

// The state of one backward call. Every node reachable from the root gets a dense index at the start (one
// NodeIndex lookup per edge afterwards); per-node state lives in vectors by that index, so running a node
// costs no allocation of the engine's own.
struct GraphTask {
  bool keep_graph = false;
  NodeIndex index;                             // node -> its index below
  std::vector<Node*> nodes;                    // index -> node (the graph keeps them alive: GraphRoot owns it)
  std::vector<int> dependencies;               // edges still to deliver a gradient to each node
  std::vector<uint32_t> first_slot;            // where each node's inputs start in `slots`
  TensorList slots;                            // gradients received so far, per node input (summed)
  // Restricted execution (autograd::grad or backward(inputs=...)), PyTorch's exec_info: which nodes run
  // (on a path to an input) and which are captured; the edge loop skips every node that is neither.
  bool restricted = false;
  std::vector<uint8_t> needed;
  std::vector<std::vector<std::pair<uint32_t, size_t>>> captures;   // per node: (input_nr, output slot)
  std::vector<uint8_t> executes;               // needed or captured
  TensorList captured;
  std::vector<std::function<void()>> final_callbacks;
  std::vector<ReadyItem> ready;                // a heap: see LowerSequenceNr

  // Empties the task for the next backward, keeping the buffers' capacity.
  void clear() {
    keep_graph = restricted = false;
    index.start_over();
    slots.clear();
    captured.clear();
    nodes.clear();
    dependencies.clear();
    first_slot.clear();
    needed.clear();
    captures.clear();
    executes.clear();
    final_callbacks.clear();
    ready.clear();
  }
};

// Graph tasks whose buffers are kept for the thread's next backward: a training loop runs the same graph
// every step, so after the first step the engine allocates nothing of its own, and no large buffer is freed
// and faulted in again per step. A nested backward (inside a hook or a checkpoint) takes a task of its own.
// Tasks of graphs above kKeepNodes nodes are not kept, so one huge backward does not pin its memory.
class GraphTaskPool {
 public:
  static constexpr size_t kKeepNodes = size_t{1} << 20;
  std::unique_ptr<GraphTask> acquire() {
    if (free_.empty()) return std::make_unique<GraphTask>();
    std::unique_ptr<GraphTask> task = std::move(free_.back());
    free_.pop_back();
    return task;
  }
  void release(std::unique_ptr<GraphTask> task) {
    if (task->nodes.size() > kKeepNodes) return;
    task->clear();
    free_.push_back(std::move(task));
  }

 private:
  std::vector<std::unique_ptr<GraphTask>> free_;
};
thread_local GraphTaskPool task_pool;

thread_local GraphTask* current_task = nullptr;

// Anomaly mode (anomaly_mode.h): PyTorch's text, raised at the node whose output holds the first NaN.
void check_no_nan(const Node& fn, const TensorList& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined() || !is_floating(outputs[i].dtype())) continue;
    for (double v : outputs[i].to_vector<double>()) {
      TINYDDP_CHECK(!std::isnan(v), "Function '", fn.name(), "' returned nan values in its ", i, "th output.");
    }
  }
}

// Anomaly mode: when evaluating `fn` throws, the front end reports where fn was created (1.13 warns with the
// forward's stack, then the error propagates). Costs one flag read per node while the mode is off.
struct ReportAnomalyOnThrow {
  Node* fn;
  int exceptions_before = is_anomaly_enabled() ? std::uncaught_exceptions() : -1;
  ~ReportAnomalyOnThrow() {
    if (exceptions_before >= 0 && std::uncaught_exceptions() > exceptions_before) detail::anomaly_node_failed(*fn);
  }
};

// Indexes every node reachable from the root (root = 0) and counts the edges pointing at each.
void count_dependencies(Node* root, GraphTask& task) {
  task.index.emplace(root, 0);
  task.nodes.push_back(root);
  task.dependencies.push_back(0);
  for (size_t next = 0; next < task.nodes.size(); ++next) {   // nodes grows while we walk it
    for (const Edge& e : task.nodes[next]->next_edges()) {
      if (!e.valid()) continue;
      const auto [k, inserted] = task.index.emplace(e.node.get(), static_cast<uint32_t>(task.nodes.size()));
      if (inserted) {
        task.nodes.push_back(e.node.get());
        task.dependencies.push_back(0);
      }
      task.dependencies[k] += 1;
    }
  }
  task.first_slot.resize(task.nodes.size() + 1);
  uint32_t slots = 0;
  for (size_t i = 0; i < task.nodes.size(); ++i) {
    task.first_slot[i] = slots;
    slots += task.nodes[i]->num_inputs();
  }
  task.first_slot.back() = slots;
  task.slots.resize(slots);
}

// Marks the nodes that lie on a path from the root to one of `inputs` (PyTorch's exec_info).
void mark_needed(const std::vector<Edge>& inputs, bool accumulate_grad, GraphTask& task) {
  const size_t n = task.nodes.size();
  task.restricted = true;
  task.needed.assign(n, 0);
  task.captures.resize(n);
  std::vector<uint8_t> target(n, 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Edge& e = inputs[i];
    if (!e.valid()) continue;
    const uint32_t k = task.index.find(e.node.get());
    if (k == NodeIndex::kAbsent) continue;   // not reached from the roots: nothing arrives there
    target[k] = 1;
    if (accumulate_grad) {
      task.needed[k] = 1;   // backward(inputs=...): run those AccumulateGrad nodes
    } else {
      task.captures[k].push_back({e.input_nr, i});
    }
  }
  // Post-order DFS: a node is needed if any child is needed or is a capture target.
  std::vector<uint8_t> state(n, 0);   // 0 unvisited, 1 on stack, 2 done
  std::vector<std::pair<uint32_t, size_t>> stack{{0, 0}};
  state[0] = 1;
  while (!stack.empty()) {
    auto& [fn, child] = stack.back();
    const auto& edges = task.nodes[fn]->next_edges();
    if (child < edges.size()) {
      Node* next = edges[child++].node.get();
      if (!next) continue;
      const uint32_t k = task.index.find(next);
      if (state[k] == 0) {
        state[k] = 1;
        stack.push_back({k, 0});
      }
      continue;
    }
    bool needed = task.needed[fn] != 0;
    for (const Edge& e : edges) {
      if (!e.valid()) continue;
      const uint32_t k = task.index.find(e.node.get());
      if (task.needed[k] || target[k]) needed = true;
    }
    if (needed) task.needed[fn] = 1;
    state[fn] = 2;
    stack.pop_back();
  }
  task.executes.resize(n);
  for (size_t i = 0; i < n; ++i) task.executes[i] = task.needed[i] || !task.captures[i].empty();
}

// Note [Gradients a restricted task does not need]: while the engine runs a node of a restricted task, the
// node's needs_input_grad(i) is false for an edge to a node the task will not execute, so the rule skips
// that gradient (PyTorch's task_should_compute_output). Only for the running node: ops its rule records
// under create_graph get nodes of their own, which save what their backward needs.
bool task_executes(const void* task, const Node* next) {
  const auto& t = *static_cast<const GraphTask*>(task);
  const uint32_t k = t.index.find(next);
  return k != NodeIndex::kAbsent && t.executes[k];
}

void run_final_callbacks(GraphTask& task) {
  // Index loop: a callback may queue further callbacks.
  for (size_t i = 0; i < task.final_callbacks.size(); ++i) {
    auto cb = std::move(task.final_callbacks[i]);
    cb();
  }
}

// Restores the thread's filter of an outer task's node (a backward nested in a rule, e.g. checkpointing).
struct ExecFilterGuard {
  ExecFilterGuard() : prev(detail::exec_filter) { detail::exec_filter = {}; }
  ~ExecFilterGuard() { detail::exec_filter = prev; }
  detail::ExecFilter prev;
};

// Restores the thread's previous graph task (nested backwards, e.g. a backward inside a hook).
struct CurrentTaskGuard {
  explicit CurrentTaskGuard(GraphTask* t) : prev(current_task) { current_task = t; }
  ~CurrentTaskGuard() { current_task = prev; }
  GraphTask* prev;
};

}  // namespace

TensorList Engine::execute(const std::vector<Edge>& roots, const TensorList& root_grads,
                           const ExecuteOptions& options) {
  // The task's buffers come from, and go back to, this thread's pool, also when a rule or hook throws.
  struct PooledTask {
    std::unique_ptr<GraphTask> task = task_pool.acquire();
    ~PooledTask() { task_pool.release(std::move(task)); }
  } pooled;
  GraphTask& task = *pooled.task;
  task.keep_graph = options.keep_graph;
  auto graph_root = std::make_shared<GraphRoot>(roots, root_grads);
  count_dependencies(graph_root.get(), task);
  if (!options.inputs.empty()) {
    mark_needed(options.inputs, options.accumulate_grad, task);
    task.captured.resize(options.inputs.size());
  }

  CurrentTaskGuard task_guard(&task);
  ExecFilterGuard filter_guard;
  AutoGradMode grad_mode(options.create_graph);   // backward rules record a graph only with create_graph

  // A heap ordered as std::priority_queue orders it (same comparator, same push and pop), in a kept buffer.
  std::vector<ReadyItem>& ready = task.ready;
  const auto push_ready = [&ready](ReadyItem item) {
    ready.push_back(item);
    std::push_heap(ready.begin(), ready.end(), LowerSequenceNr{});
  };
  push_ready({graph_root->sequence_nr(), 0});
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), LowerSequenceNr{});
    const uint32_t index = ready.back().index;
    ready.pop_back();
    Node* fn = task.nodes[index];
    const ReportAnomalyOnThrow anomaly_report{fn};
    TensorList inputs(std::make_move_iterator(task.slots.begin() + task.first_slot[index]),
                      std::make_move_iterator(task.slots.begin() + task.first_slot[index + 1]));

    bool pre_hooks_ran = false;   // a node both captured and needed runs its hooks once, not twice
    if (task.restricted) {
      if (!task.captures[index].empty()) {
        fn->run_pre_hooks(inputs);
        pre_hooks_ran = true;
        for (auto [input_nr, slot] : task.captures[index]) task.captured[slot] = inputs[input_nr];
      }
      if (index != 0 && !task.needed[index]) continue;
    }

    if (!pre_hooks_ran) fn->run_pre_hooks(inputs);
    // Trace: one span per node, around apply and the post hooks (the DDP reducer's hook nests in AccumulateGrad's).
    auto span = trace::span([&] {
      const std::string name = fn->name();
      return trace::What{name == "AccumulateGrad" ? "accumulate_grad" : "autograd", name,
                         {{"seq", static_cast<int64_t>(fn->sequence_nr())}}};
    });
    detail::exec_filter = task.restricted ? detail::ExecFilter{fn, &task, task_executes} : detail::ExecFilter{};
    // Post hooks see the inputs, so only then does the engine keep a copy; otherwise the gradients move into
    // apply (AccumulateGrad steals a gradient nobody else holds: accumulate_grad.h).
    TensorList outputs = fn->has_post_hooks() ? fn->apply(TensorList(inputs)) : fn->apply(std::move(inputs));
    detail::exec_filter = {};
    if (!task.keep_graph) fn->release_saved();
    if (is_anomaly_enabled()) check_no_nan(*fn, outputs);
    fn->run_post_hooks(outputs, inputs);

    const auto& edges = fn->next_edges();
    TINYDDP_INTERNAL_ASSERT(outputs.size() == edges.size() || (outputs.empty() && edges.empty()),
                            fn->name(), " produced ", outputs.size(), " gradients for ", edges.size(), " edges.");
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      const uint32_t next = task.index.find(e.node.get());
      if (task.restricted && !task.executes[next]) continue;   // PyTorch skips what exec_info does not run
      if (outputs[i].defined()) {
        Tensor& slot = task.slots[task.first_slot[next] + e.input_nr];
        // Gradients reaching the same input are summed with an engine op (differentiable under create_graph).
        slot = slot.defined() ? slot + outputs[i] : std::move(outputs[i]);
      }
      if (--task.dependencies[next] == 0) push_ready({task.nodes[next]->sequence_nr(), next});
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
