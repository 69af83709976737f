// Autograd for Python: backward, autograd.grad, grad mode, anomaly mode, graph nodes (grad_fn) and tensor
// hooks written in Python. Semantics and error texts are the engine's (engine/autograd/*.h).
#include <atomic>

#include "bindings.h"

namespace tinyddp::python {

namespace {

std::optional<bool> optional_bool(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  return o.cast<bool>();
}

// What Tensor.register_hook returns: remove() turns the hook into a no-op (the engine keeps hooks for the
// tensor's lifetime; see docs/python.md).
struct RemovableHandle {
  std::shared_ptr<std::atomic<bool>> active = std::make_shared<std::atomic<bool>>(true);
  void remove() { *active = false; }
};

}  // namespace

void bind_autograd(py::module_& m) {
  py::class_<autograd::Node, std::shared_ptr<autograd::Node>>(m, "Node")
      .def("name", &autograd::Node::name)
      .def_property_readonly("next_functions", [](const autograd::Node& n) {
        py::list out;
        for (const autograd::Edge& e : n.next_edges())
          out.append(py::make_tuple(e.node ? py::cast(e.node) : py::none(), e.input_nr));
        return py::tuple(out);
      })
      .def("__repr__", [](const autograd::Node& n) { return "<" + n.name() + " object>"; });

  py::class_<RemovableHandle>(m, "RemovableHandle").def("remove", &RemovableHandle::remove);

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "backward",
      [](const Tensor& t, const py::object& gradient, const py::object& retain_graph, bool create_graph,
         const py::object& inputs) {
        BackwardOptions options;
        options.retain_graph = optional_bool(retain_graph);
        options.create_graph = create_graph;
        if (!inputs.is_none()) options.inputs = tensors_from_py(inputs);
        Tensor g = from_py(gradient);
        py::gil_scoped_release gil;
        t.backward(g, options);
      },
      py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(), py::arg("create_graph") = false,
      py::arg("inputs") = py::none());
  // The hook runs on the thread running the backward, with the GIL taken back; returning None keeps the
  // gradient, returning a tensor replaces it.
  cls.def("register_hook", [](const Tensor& t, const py::function& fn) {
    RemovableHandle handle;
    PyRef ref(fn);
    auto active = handle.active;
    t.register_hook([ref, active](const Tensor& grad) -> Tensor {
      if (!*active) return Tensor();
      py::gil_scoped_acquire gil;
      py::object out = ref.get()(to_py(grad));
      if (out.is_none()) return Tensor();
      TINYDDP_CHECK(py::isinstance<Tensor>(out), "hook returned an object that is not a Tensor or None: ",
                    py::str(py::type::of(out)).cast<std::string>());
      return out.cast<Tensor>();
    });
    return handle;
  });

  m.def("_backward", [](const py::object& tensors, const py::object& grad_tensors, const py::object& retain_graph,
                        bool create_graph, const py::object& inputs) {
    std::vector<Tensor> roots = tensors_from_py(tensors), seeds;
    if (!grad_tensors.is_none()) seeds = tensors_from_py(grad_tensors);
    BackwardOptions options;
    options.retain_graph = optional_bool(retain_graph);
    options.create_graph = create_graph;
    if (!inputs.is_none()) options.inputs = tensors_from_py(inputs);
    py::gil_scoped_release gil;
    autograd::backward(roots, seeds, options);
  });
  m.def(
      "_grad",
      [](const py::object& outputs, const py::object& inputs, const py::object& grad_outputs,
         const py::object& retain_graph, bool create_graph, bool allow_unused) {
        std::vector<Tensor> outs = tensors_from_py(outputs), ins = tensors_from_py(inputs), seeds;
        if (!grad_outputs.is_none()) seeds = tensors_from_py(grad_outputs);
        autograd::GradOptions options;
        options.retain_graph = optional_bool(retain_graph);
        options.create_graph = create_graph;
        options.allow_unused = allow_unused;
        std::vector<Tensor> result;
        {
          py::gil_scoped_release gil;
          result = autograd::grad(outs, ins, seeds, options);
        }
        py::list out;
        for (const Tensor& g : result) out.append(to_py(g));
        return py::tuple(out);
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs") = py::none(), py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false, py::arg("allow_unused") = false);

  // Grad mode is per thread (each rank thread has its own), as PyTorch's.
  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("_set_grad_enabled", &GradMode::set_enabled);
  m.def("_set_detect_anomaly", &autograd::set_detect_anomaly);
  m.def("is_anomaly_enabled", &autograd::is_anomaly_enabled);
}

}  // namespace tinyddp::python
