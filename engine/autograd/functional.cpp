#include "engine/autograd/functional.h"

#include "engine/autograd/engine.h"
#include "engine/autograd/node.h"
#include "engine/ops/ops.h"

namespace tinyddp::autograd {

namespace {

// Roots and their seed gradients; an implicit seed (ones) only for one-element outputs, as PyTorch.
void make_roots(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs, const char* api,
                std::vector<Edge>& roots, TensorList& seeds) {
  TINYDDP_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), api, ": got ", outputs.size(),
                " outputs but ", grad_outputs.size(), " output gradients; pass one gradient per output (or none).");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    TINYDDP_CHECK(out.defined(), api, ": output ", i, " is an undefined tensor.");
    TINYDDP_CHECK(out.requires_grad(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor seed = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!seed.defined()) {
      TINYDDP_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      seed = ones_like(out);
    } else {
      const auto size = [](const Shape& s) { return "torch.Size(" + shape_str(s) + ")"; };   // PyTorch's text
      TINYDDP_CHECK(seed.shape() == out.shape(), "Mismatch in shape: grad_output[", i, "] has a shape of ",
                    size(seed.shape()), " and output[", i, "] has a shape of ", size(out.shape()), ".");
      // PyTorch's engine casts a seed of another dtype to the output's (validate_outputs), as for every gradient
      if (seed.dtype() != out.dtype()) seed = seed.to(out.dtype());
    }
    roots.push_back(gradient_edge(out));
    seeds.push_back(seed);
  }
}

}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              const BackwardOptions& options) {
  std::vector<Edge> roots;
  TensorList seeds;
  make_roots(tensors, grad_tensors, "backward", roots, seeds);
  ExecuteOptions exec;
  exec.create_graph = options.create_graph;
  exec.keep_graph = options.retain_graph.value_or(options.create_graph);
  exec.accumulate_grad = true;
  for (const Tensor& input : options.inputs) {
    TINYDDP_CHECK(input.defined() && input.requires_grad(), "One of the differentiated Tensors does not require grad");
    // A non-leaf input gets its .grad as PyTorch's does: it retains its gradient from now on, and its node runs
    // (its retain hook fills .grad), its inputs' nodes only where they lead to another input.
    if (!input.is_leaf()) input.retain_grad();
    exec.inputs.push_back(gradient_edge(input));
  }
  Engine::execute(roots, seeds, exec);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, const GradOptions& options) {
  TINYDDP_CHECK(!inputs.empty(), "grad requires at least one input tensor to differentiate with respect to.");
  std::vector<Edge> roots;
  TensorList seeds;
  make_roots(outputs, grad_outputs, "grad", roots, seeds);
  ExecuteOptions exec;
  exec.create_graph = options.create_graph;
  exec.keep_graph = options.retain_graph.value_or(options.create_graph);
  exec.accumulate_grad = false;
  for (const Tensor& input : inputs) {
    TINYDDP_CHECK(input.defined() && input.requires_grad(), "One of the differentiated Tensors does not require grad");
    exec.inputs.push_back(gradient_edge(input));
  }
  TensorList result = Engine::execute(roots, seeds, exec);
  for (size_t i = 0; i < result.size(); ++i) {
    TINYDDP_CHECK(result[i].defined() || options.allow_unused,
                  "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
                  "if this is the desired behavior.");
    // Without create_graph the result carries no history (a rule may have returned a tensor with one).
    if (result[i].defined() && !options.create_graph) result[i] = result[i].detach();
  }
  return result;
}

}  // namespace tinyddp::autograd
