#include "engine/autograd/checkpoint.h"

#include <optional>
#include <string>

#include "base/warning.h"
#include "engine/autograd/engine.h"
#include "engine/autograd/functional.h"
#include "engine/autograd/grad_mode.h"
#include "engine/autograd/saved_tensor_hooks.h"
#include "engine/ops/ops.h"

namespace tinyddp::autograd {

namespace {

// Replays the forward's random stream for a recomputation, then puts the surrounding stream back
// (PyTorch's fork_rng + set_rng_state).
class ReplayRng {
 public:
  ReplayRng(bool enabled, const std::string& forward_state) {
    if (!enabled) return;
    surrounding_ = get_rng_state();
    set_rng_state(forward_state);
  }
  ~ReplayRng() {
    if (surrounding_) set_rng_state(*surrounding_);
  }
  ReplayRng(const ReplayRng&) = delete;
  ReplayRng& operator=(const ReplayRng&) = delete;

 private:
  std::optional<std::string> surrounding_;
};

bool any_requires_grad(const TensorList& tensors) {
  for (const Tensor& t : tensors)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

// ---- reentrant: one node for the whole segment, a nested backward inside it ----

// The outputs' node. Keeps the inputs (through SavedTensor, so saved-tensor hooks see them) and the
// function, nothing of the segment's inside. Its next edges are the inputs' only: the parameters the
// function uses are reached by the nested backward, never by the graph this node belongs to.
class CheckpointFunctionBackward : public Node {
 public:
  CheckpointFunctionBackward(uint64_t sequence_nr, CheckpointFunction function, bool preserve_rng_state,
                             std::string rng_state)
      : Node(sequence_nr), function_(std::move(function)), preserve_rng_state_(preserve_rng_state),
        rng_state_(std::move(rng_state)) {}

  std::string name() const override { return "CheckpointFunctionBackward"; }

  void save_inputs(const TensorList& inputs) {
    for (const Tensor& t : inputs) saved_inputs_.emplace_back(t, /*is_output=*/false);
  }

  TensorList apply(TensorList&& grads) override {
    TINYDDP_CHECK(Engine::is_checkpoint_valid(),
                  "Checkpointing is not compatible with .grad() or when an `inputs` parameter is passed to "
                  ".backward(). Please use .backward() and do not pass its `inputs` argument.");
    // Fresh leaves with the inputs' requires_grad: the nested backward stops at them and leaves their
    // gradients in .grad, which this node hands on along its edges.
    TensorList detached;
    for (const SavedTensor& s : saved_inputs_) {
      const Tensor input = s.unpack(*this);
      Tensor d;
      if (input.defined()) {
        d = input.detach();
        d.requires_grad_(input.requires_grad());
      }
      detached.push_back(d);
    }
    TensorList outputs;
    {
      ReplayRng rng(preserve_rng_state_, rng_state_);
      AutoGradMode grad_mode(true);
      outputs = function_(detached);
    }
    TINYDDP_CHECK(outputs.size() == grads.size(), "checkpoint: the function returned ", grads.size(),
                  " outputs in the forward but ", outputs.size(), " when recomputed in the backward; it must "
                  "compute the same thing both times.");
    // Only outputs that require grad are differentiated; a gradient that did not arrive is zeros, as a
    // custom autograd Function sees it (materialized).
    TensorList roots, root_grads;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].defined() || !outputs[i].requires_grad()) continue;
      roots.push_back(outputs[i]);
      root_grads.push_back(grads[i].defined() ? grads[i] : zeros_like(outputs[i]));
    }
    TINYDDP_CHECK(!roots.empty(), "none of output has requires_grad=True, this checkpoint() is not necessary");
    autograd::backward(roots, root_grads);   // reentrant: a graph task of its own, on this thread
    TensorList input_grads;
    for (const Tensor& d : detached) input_grads.push_back(d.defined() && d.requires_grad() ? d.grad() : Tensor());
    return input_grads;
  }

  void release_saved() override {
    for (SavedTensor& s : saved_inputs_) s.release();
  }

 private:
  CheckpointFunction function_;
  bool preserve_rng_state_;
  std::string rng_state_;   // the generator before the forward; empty unless preserve_rng_state_
  std::vector<SavedTensor> saved_inputs_;
};

TensorList checkpoint_reentrant(const CheckpointFunction& function, const TensorList& inputs, bool preserve_rng_state) {
  const bool inputs_require_grad = any_requires_grad(inputs);
  if (!inputs_require_grad) warn("None of the inputs have requires_grad=True. Gradients will be None");
  // The node's number is drawn before the forward, as a custom Function's node is created before it runs.
  const uint64_t sequence_nr = next_sequence_nr();
  std::string rng_state = preserve_rng_state ? get_rng_state() : std::string();
  TensorList outputs;
  {
    NoGradGuard no_grad;
    outputs = function(inputs);
  }
  if (!GradMode::is_enabled() || !inputs_require_grad) return outputs;   // no graph, as a custom Function

  auto node = std::make_shared<CheckpointFunctionBackward>(sequence_nr, function, preserve_rng_state,
                                                           std::move(rng_state));
  auto& edges = node->mutable_next_edges();
  for (const Tensor& t : inputs) edges.push_back(gradient_edge(t));
  node->set_num_inputs(static_cast<uint32_t>(outputs.size()));
  node->save_inputs(inputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    if (!out.defined()) continue;
    bool is_input = false;
    for (const Tensor& t : inputs) is_input |= out.is_same(t);
    // An input (or a leaf) handed back as it is keeps its own identity: the output is a new handle on it.
    if (is_input || out.requires_grad()) out = make_view(out, out.shape(), out.strides(), out.offset());
    set_history(out, node, static_cast<uint32_t>(i));
  }
  return outputs;
}

// ---- non-reentrant: the ordinary graph, its saved tensors replaced by placeholders ----

// What a saved tensor of the segment's forward becomes: filled by the recomputation. Owned only by the
// SavedTensor it was packed into, so it (and the recomputed tensor) dies when that node releases it.
struct Placeholder {
  std::optional<Tensor> recomputed;
};

struct Recomputation {
  CheckpointFunction function;
  TensorList inputs;
  bool preserve_rng_state = true;
  std::string rng_state;
  std::vector<std::weak_ptr<Placeholder>> placeholders;   // one per tensor the forward saved, in save order

  // Whether a live placeholder holds a recomputed tensor (PyTorch: the storage dictionary is not empty).
  bool has_recomputed() const {
    for (const auto& weak : placeholders)
      if (auto p = weak.lock(); p && p->recomputed) return true;
    return false;
  }

  // Re-runs the function; the k-th tensor it saves fills the k-th placeholder (when that one is still alive),
  // detached so that the recomputation's own graph is dropped at once.
  void recompute() {
    size_t saved_count = 0;
    PackHook fill = [this, &saved_count](const Tensor& t) -> std::any {
      ++saved_count;
      TINYDDP_CHECK(saved_count <= placeholders.size(), "checkpoint (use_reentrant=false): the recomputation saved "
                    "more tensors for backward than the forward did (", placeholders.size(), "); the checkpointed "
                    "function must run the same ops both times (no branch on global state or on the step).");
      if (auto p = placeholders[saved_count - 1].lock()) p->recomputed = t.detach();
      return {};
    };
    UnpackHook never = [](const std::any&) -> Tensor {
      throw Error("You are calling backwards on a tensor that is never exposed. Please open an issue.");
    };
    ReplayRng rng(preserve_rng_state, rng_state);
    AutoGradMode grad_mode(true);
    SavedTensorHooksGuard hooks(std::move(fill), std::move(never));
    function(inputs);
  }
};

TensorList checkpoint_without_reentrant(const CheckpointFunction& function, const TensorList& inputs,
                                        bool preserve_rng_state) {
  auto state = std::make_shared<Recomputation>();
  state->function = function;
  state->inputs = inputs;
  state->preserve_rng_state = preserve_rng_state;
  if (preserve_rng_state) state->rng_state = get_rng_state();
  PackHook pack = [state](const Tensor&) -> std::any {
    auto p = std::make_shared<Placeholder>();
    state->placeholders.push_back(p);
    return p;
  };
  UnpackHook unpack = [state](const std::any& packed) -> Tensor {
    const auto p = std::any_cast<std::shared_ptr<Placeholder>>(packed);
    if (!state->has_recomputed()) state->recompute();
    TINYDDP_CHECK(p->recomputed.has_value(),
                  "Attempt to retrieve a tensor saved by autograd multiple times without checkpoint recomputation "
                  "being triggered in between, this is not currently supported. Please open an issue with details "
                  "on your use case so that we can prioritize adding this.");
    return *p->recomputed;
  };
  SavedTensorHooksGuard hooks(std::move(pack), std::move(unpack));
  return function(inputs);
}

}  // namespace

TensorList checkpoint(const CheckpointFunction& function, const TensorList& inputs, const CheckpointOptions& options) {
  TINYDDP_CHECK(static_cast<bool>(function), "checkpoint: expected a function to run, but got an empty one.");
  return options.use_reentrant ? checkpoint_reentrant(function, inputs, options.preserve_rng_state)
                               : checkpoint_without_reentrant(function, inputs, options.preserve_rng_state);
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& function, const Tensor& input,
                  const CheckpointOptions& options) {
  TINYDDP_CHECK(static_cast<bool>(function), "checkpoint: expected a function to run, but got an empty one.");
  CheckpointFunction wrapped = [function](const TensorList& in) { return TensorList{function(in[0])}; };
  return checkpoint(wrapped, TensorList{input}, options)[0];
}

}  // namespace tinyddp::autograd
