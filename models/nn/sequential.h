// nn::Sequential: children named "0", "1", ... whose forwards are chained, as PyTorch's nn.Sequential.
//
//   auto trunk = std::make_shared<nn::Sequential>(nn::Linear(4, 8), nn::Tanh(), nn::Linear(8, 8));  // by value
//   nn::Sequential seq{std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>()};            // shared
//   seq.push_back(std::make_shared<nn::Linear>(8, 2));   // child "2"
//   Tensor y = seq(x);                                   // children[2](children[1](children[0](x)))
//   Tensor w = seq.at<nn::Linear>(2)->weight();          // typed access; seq[2] gives the Module
//
// Parameter names follow the child names: "0.weight", "0.bias", "2.weight", ...
#pragma once

#include <concepts>
#include <initializer_list>
#include <type_traits>

#include "models/nn/module.h"

namespace tinyddp::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  // Modules given by value are moved into shared ownership; shared_ptrs are registered as they are.
  template <typename... Ms>
    requires(sizeof...(Ms) > 0 && ((std::derived_from<std::remove_cvref_t<Ms>, Module> &&
                                    !std::is_lvalue_reference_v<Ms>) && ...))
  explicit Sequential(Ms&&... modules) {
    (push_back(std::make_shared<std::remove_cvref_t<Ms>>(std::move(modules))), ...);
  }

  // Appends `module` as child std::to_string(size()).
  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return named_children().size(); }

  // Child i; throws when i >= size().
  std::shared_ptr<Module> operator[](size_t i) const;
  // Child i as an M; throws naming the actual type when it is not one.
  template <typename M>
  std::shared_ptr<M> at(size_t i) const {
    std::shared_ptr<Module> child = (*this)[i];
    std::shared_ptr<M> typed = std::dynamic_pointer_cast<M>(child);
    TINYDDP_CHECK(typed != nullptr, "Sequential::at(", i, "): child ", i, " is a ", child->type_name(),
                  ", not the requested type. Check the index against the model's printout (operator<<).");
    return typed;
  }

  // x through each child in order; an empty Sequential returns x, as PyTorch's.
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "Sequential"; }
};

}  // namespace tinyddp::nn
