// nn::Module: the base of every layer and model. A module owns parameters (leaf tensors that require
// grad), buffers (state that is not trained, like BatchNorm's running statistics) and child modules, all
// registered by name, and walks them the way PyTorch 1.13 does.
//
//   struct TwoTask : nn::Module {
//     std::shared_ptr<nn::Sequential> trunk = register_module("trunk", std::make_shared<nn::Sequential>(...));
//     std::shared_ptr<nn::Linear> head = register_module("head", std::make_shared<nn::Linear>(8, 1));
//   };
//   TwoTask m;
//   for (auto& [name, p] : m.named_parameters()) ...   // "trunk.0.weight", "trunk.0.bias", ..., "head.bias"
//   m.zero_grad();                                      // zero .grad in place (PyTorch 1.13's default)
//   m.eval();                                           // training = false here and in every descendant
//   m.head->requires_grad_(false);                      // freeze a part (any time, also under DDP)
//   Tensor y = (*m.trunk)(x);                           // operator() calls forward(), then the forward hooks
//
// Invariants:
//  - registration order is iteration order; names are unique among a module's parameters, buffers and
//    children, and contain no '.', which joins names across levels;
//  - parameters and buffers are held by handle: a registered tensor keeps its identity for the module's
//    lifetime (optimizers, DDP hooks and buffer broadcasts, load_parameters rely on it), so change values in
//    place, never reassign;
//  - traversal visits a module's own parameters (or buffers) before its children's, depth first, and lists
//    a module or a tensor reached twice only once (PyTorch's memo), under the first name it was reached by.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "engine/tinyddp.h"

namespace tinyddp::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  // Not copyable: a copy would share parameter tensors with the original without saying so. Movable, so
  // that a module built by value can be handed over (see Sequential's constructors).
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  // The computation of a single-input, single-output module. The default throws, naming the module type:
  // modules with several inputs or outputs (losses, multi-task models) define their own methods instead.
  virtual Tensor forward(const Tensor& x);
  // PyTorch's __call__: forward(x), then every forward hook in registration order. Containers call their
  // children this way; a direct forward() call runs no hook, as in PyTorch.
  Tensor operator()(const Tensor& x);

  // PyTorch's register_forward_hook, for observing: hook(module, input, output) runs after each call through
  // operator(). Unlike PyTorch's, a hook cannot replace the output. Returns the id remove_forward_hook takes.
  using ForwardHook = std::function<void(Module& module, const Tensor& input, const Tensor& output)>;
  int64_t register_forward_hook(ForwardHook hook);
  // Removes the hook registered under `id`; an id already removed (or never issued) is ignored, as
  // PyTorch's RemovableHandle.remove() is when called twice.
  void remove_forward_hook(int64_t id);

  // The class name used in messages and printing ("Linear", "Sequential"). The default is the dynamic type's
  // unqualified C++ name, so user subclasses need not override it.
  virtual std::string type_name() const;
  // The text inside the parentheses when printed, e.g. "in_features=4, out_features=8, bias=True".
  virtual std::string extra_repr() const { return {}; }
  // PyTorch's repr: type_name(extra_repr) and, indented, each child as "(name): ...".
  std::string to_string() const;

  // Registers `tensor` as parameter `name`, marks it requires_grad, and returns it (the same handle).
  Tensor register_parameter(const std::string& name, Tensor tensor);

  // Registers `tensor` as buffer `name` and returns it (the same handle). Its requires_grad is left as it is
  // (PyTorch's register_buffer does not touch it). Unlike PyTorch, registering a buffer name again is refused:
  // DDP and state files hold the first tensor, so copy new values into it instead.
  Tensor register_buffer(const std::string& name, Tensor tensor);

  // Registers `module` as child `name` and returns it.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // Recursive, in registration order, each tensor once (see the invariants above).
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  // This module's own parameters only, in registration order.
  const std::vector<std::pair<std::string, Tensor>>& named_own_parameters() const { return params_; }
  // Buffers like parameters: recursive, registration order, dotted names, each tensor once.
  std::vector<Tensor> buffers() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  const std::vector<std::pair<std::string, Tensor>>& named_own_buffers() const { return buffers_; }
  // Direct children, in registration order.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }
  // This module (name "") and every descendant, depth first, each module once.
  std::vector<std::pair<std::string, const Module*>> named_modules() const;
  // The parameter with dotted name `name` (e.g. "trunk.2.weight"); throws listing the names when absent.
  Tensor parameter(const std::string& name) const;

  // PyTorch 1.13's Module.zero_grad: set_to_none = false zeroes every existing .grad in place (under
  // NoGradGuard, detaching a .grad that carries history first); true drops the .grad tensors instead.
  void zero_grad(bool set_to_none = false);
  // Moves every parameter (and its .grad) and every buffer to `device` in place, as PyTorch's
  // module.to(device): the handles stay the same tensors, so build optimizers and DDP after or before.
  void to(Device device);
  // PyTorch's Module.requires_grad_: sets requires_grad on every parameter (recursively); returns *this.
  // Freezing under DDP is allowed at any time: a frozen parameter's gradient hook just does not fire (with
  // find_unused_parameters = false the reducer then waits for it, as PyTorch 1.13's does).
  Module& requires_grad_(bool requires_grad = true);

  // Sets training mode here and in every descendant; returns *this. eval() is train(false).
  Module& train(bool mode = true);
  Module& eval() { return train(false); }
  bool is_training() const { return training_; }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name, const char* kind) const;

  bool training_ = true;   // PyTorch modules start in training mode
  std::vector<std::pair<int64_t, ForwardHook>> forward_hooks_;              // (id, hook), registration order
  int64_t next_hook_id_ = 0;
  std::vector<std::pair<std::string, Tensor>> params_;                      // own parameters, registration order
  std::vector<std::pair<std::string, Tensor>> buffers_;                     // own buffers, registration order
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;   // children, registration order
};

std::ostream& operator<<(std::ostream& os, const Module& m);

// The shared body of Module::zero_grad and Optimizer::zero_grad (see Module::zero_grad).
void zero_grad_of(const std::vector<Tensor>& params, bool set_to_none);

}  // namespace tinyddp::nn
