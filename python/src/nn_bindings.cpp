// models/ for Python: nn::Linear (its init and forward; tinyddp/nn/modules/linear.py registers its tensors
// as the Python module's Parameters), the functional losses, batch_norm, layer_norm, embedding, clip_grad_norm_,
// zero_grad, and the optimizers SGD and Adam.
#include "bindings.h"
#include "models/nn/nn.h"
#include "models/optim/adam.h"
#include "models/optim/sgd.h"

namespace tinyddp::python {

namespace {

using release = py::call_guard<py::gil_scoped_release>;

}  // namespace

void bind_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("_nn", "models/nn for tinyddp.nn");
  py::class_<nn::Linear, std::shared_ptr<nn::Linear>>(nn, "Linear")
      .def(py::init([](int64_t in_features, int64_t out_features, bool bias, DType dtype) {
             py::gil_scoped_release gil;   // the init draws from the engine's RNG
             return std::make_shared<nn::Linear>(in_features, out_features, bias, dtype);
           }),
           py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true, py::arg("dtype") = DType::f32)
      .def_static("_adopt",
                  [](const Tensor& weight, const std::optional<Tensor>& bias) {
                    return std::make_shared<nn::Linear>(weight, bias ? *bias : Tensor());
                  },
                  py::arg("weight"), py::arg("bias"), "A Linear over these tensors (no init): copies and unpickling.")
      .def("forward", &nn::Linear::forward, release())
      .def_property_readonly("weight", [](const nn::Linear& l) { return to_py(l.weight()); })
      .def_property_readonly("bias", [](const nn::Linear& l) { return to_py(l.bias()); })
      .def("extra_repr", &nn::Linear::extra_repr);

  // F.linear: PyTorch's graph (engine/ops/matmul_forms.cpp), addmm for a 2-D input with a bias (AddmmBackward0),
  // else matmul (+ bias).
  nn.def("linear",
         [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) { return linear(x, w, b ? *b : Tensor()); },
         py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), release());
  nn.def("relu", [](const Tensor& x) { return relu(x); }, release());
  nn.def("tanh", [](const Tensor& x) { return tanh(x); }, release());
  nn.def("sigmoid", [](const Tensor& x) { return sigmoid(x); }, release());
  nn.def("erf", [](const Tensor& x) { return erf(x); }, release());
  nn.def("log_softmax", [](const Tensor& x, int64_t dim) { return log_softmax(x, dim); }, release());
  nn.def("softmax", [](const Tensor& x, int64_t dim) { return softmax(x, dim); }, release());
  nn.def("mse_loss", [](const Tensor& input, const Tensor& target) { return mse_loss(input, target); }, release());
  nn.def("cross_entropy", [](const Tensor& input, const Tensor& target) { return cross_entropy(input, target); },
         release());
  // Normalization and embedding (engine/ops/normalization.cpp, index.cpp); None for an absent tensor.
  auto or_undefined = [](const std::optional<Tensor>& t) { return t ? *t : Tensor(); };
  nn.def("batch_norm",
         [or_undefined](const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                        const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                        bool training, double momentum, double eps) {
           return batch_norm(input, or_undefined(weight), or_undefined(bias), or_undefined(running_mean),
                             or_undefined(running_var), training, momentum, eps);
         },
         py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("running_mean"), py::arg("running_var"),
         py::arg("training"), py::arg("momentum"), py::arg("eps"), release());
  nn.def("layer_norm",
         [or_undefined](const Tensor& input, const Shape& normalized_shape, const std::optional<Tensor>& weight,
                        const std::optional<Tensor>& bias, double eps) {
           return layer_norm(input, normalized_shape, or_undefined(weight), or_undefined(bias), eps);
         },
         py::arg("input"), py::arg("normalized_shape"), py::arg("weight"), py::arg("bias"), py::arg("eps"),
         release());
  nn.def("embedding", [](const Tensor& weight, const Tensor& indices) { return embedding(weight, indices); },
         py::arg("weight"), py::arg("indices"), release());
  // nn.utils.clip_grad_norm_ (norm_type 2): the total norm of the defined grads, and the in-place scaling.
  nn.def("grad_norm", [](const std::vector<Tensor>& params) {
           std::vector<Tensor> grads;
           for (const Tensor& p : params)
             if (p.grad().defined()) grads.push_back(p.grad());
           return grads.empty() ? scalar_tensor(0.0) : multi_tensor_norm(grads);
         }, release());
  nn.def("clip_grad_norm_", [](const std::vector<Tensor>& params, double max_norm) {
           return clip_grad_norm_(params, max_norm);
         }, release());
  // nn.utils.clip_grad_value_: the clamped values, copied back into each .grad in Python.
  nn.def("clamp", [](const Tensor& x, double min, double max) { return clamp(x, min, max); }, release());
  nn.def("nll_loss", [](const Tensor& input, const Tensor& target) { return nll_loss(input, target); }, release());
  nn.def("nll_reduce", &nll_reduce, py::arg("row_losses"), py::arg("row_weights"), py::arg("valid"),
         py::arg("weighted"), py::arg("mean"), release());
  nn.def("zero_grad", [](const std::vector<Tensor>& params, bool set_to_none) { nn::zero_grad_of(params, set_to_none); },
         release());

  // The per-parameter updates over one parameter group's lists (1.13's _single_tensor_sgd/_adam/_adamw); the
  // state lives in tinyddp.optim's Optimizer.state, as in PyTorch, and the group's values are read at each step.
  py::module_ optim = m.def_submodule("_optim", "models/optim for tinyddp.optim");
  optim.def(
      "sgd",
      [](const py::object& params, const py::object& grads, const py::object& momentum_buffers, double lr,
         double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
        const std::vector<Tensor> ps = tensors_from_py(params), gs = tensors_from_py(grads);
        std::vector<Tensor> bufs = tensors_from_py(momentum_buffers);   // None: no buffer yet
        TINYDDP_INTERNAL_ASSERT(ps.size() == gs.size() && ps.size() == bufs.size(), "sgd: list lengths differ");
        {
          py::gil_scoped_release gil;
          const optim::SGDOptions o{lr, momentum, dampening, weight_decay, nesterov, maximize};
          for (size_t i = 0; i < ps.size(); ++i) optim::sgd_update(ps[i], gs[i], bufs[i], o);
        }
        py::list out;
        for (const Tensor& b : bufs) out.append(to_py(b));
        return out;
      },
      py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::arg("lr"), py::arg("momentum"),
      py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"), py::arg("maximize"));
  optim.def(
      "adam",
      [](const py::object& params, const py::object& grads, const py::object& exp_avgs, const py::object& exp_avg_sqs,
         const py::object& max_exp_avg_sqs, const std::vector<double>& steps, double lr, double beta1, double beta2,
         double eps, double weight_decay, bool amsgrad, bool maximize, bool decoupled_weight_decay) {
        const std::vector<Tensor> ps = tensors_from_py(params), gs = tensors_from_py(grads);
        const std::vector<Tensor> ms = tensors_from_py(exp_avgs), vs = tensors_from_py(exp_avg_sqs);
        const std::vector<Tensor> vmaxs = tensors_from_py(max_exp_avg_sqs);   // empty unless amsgrad
        TINYDDP_INTERNAL_ASSERT(ps.size() == gs.size() && ps.size() == ms.size() && ps.size() == vs.size() &&
                                    ps.size() == steps.size() && (!amsgrad || vmaxs.size() == ps.size()),
                                "adam: list lengths differ");
        py::gil_scoped_release gil;
        const optim::AdamOptions o{lr, {beta1, beta2}, eps, weight_decay, amsgrad, maximize};
        for (size_t i = 0; i < ps.size(); ++i) {
          optim::adam_update(ps[i], gs[i], ms[i], vs[i], amsgrad ? vmaxs[i] : Tensor(), steps[i], o,
                             decoupled_weight_decay);
        }
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"),
      py::arg("steps"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("amsgrad"), py::arg("maximize"), py::arg("decoupled_weight_decay"));
}

}  // namespace tinyddp::python
