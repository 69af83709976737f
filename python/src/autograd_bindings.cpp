// Autograd for Python: backward, autograd.grad, grad mode, anomaly mode, graph nodes (grad_fn), tensor hooks and
// saved-tensor hooks written in Python, and activation checkpointing of a Python function. Semantics and error
// texts are the engine's (engine/autograd/*.h).
#include <any>
#include <atomic>
#include <sstream>

#include "bindings.h"
#include "engine/autograd/accumulate_grad.h"
#include "engine/autograd/checkpoint.h"
#include "engine/autograd/saved_tensor_hooks.h"

namespace tinyddp::python {

namespace {

std::optional<bool> optional_bool(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  return o.cast<bool>();
}

// backward's `inputs` (None: all leaves), refusing an empty sequence with 1.13's text.
std::optional<std::vector<Tensor>> backward_inputs(const py::object& inputs) {
  if (inputs.is_none()) return std::nullopt;
  if (!py::isinstance<Tensor>(inputs) && py::len(inputs) == 0)
    throw std::runtime_error("'inputs' argument to backward() cannot be empty.");
  return tensors_from_py(inputs);
}

// What Tensor.register_hook returns: remove() turns the hook into a no-op (the engine keeps hooks for the
// tensor's lifetime; see docs/python.md).
struct RemovableHandle {
  std::shared_ptr<std::atomic<bool>> active = std::make_shared<std::atomic<bool>>(true);
  void remove() { *active = false; }
};

// torch.autograd.graph.saved_tensors_hooks's push and pop: this thread's open `with` scopes, innermost last.
// The engine's guards are a per-thread stack too, so a scope must be closed on the thread that opened it.
thread_local std::vector<std::unique_ptr<autograd::SavedTensorHooksGuard>> saved_tensors_hooks_scopes;

void push_saved_tensors_hooks(const py::function& pack_hook, const py::function& unpack_hook) {
  // What pack returns may be any Python object: it is kept as a PyRef (copyable, as std::any needs), whose last
  // copy is dropped under the GIL on whichever thread frees the graph.
  autograd::PackHook pack = [fn = PyRef(pack_hook)](const Tensor& t) -> std::any {
    py::gil_scoped_acquire gil;
    return PyRef(fn.get()(to_py(t)));
  };
  autograd::UnpackHook unpack = [fn = PyRef(unpack_hook)](const std::any& packed) -> Tensor {
    py::gil_scoped_acquire gil;
    py::object out = fn.get()(std::any_cast<const PyRef&>(packed).get());
    if (!py::isinstance<Tensor>(out))   // PyTorch's text (a TypeError there too)
      throw py::type_error("Output of saved tensor unpack_hook expected to be a Tensor but got result of type " +
                           py::str(py::type::of(out).attr("__name__")).cast<std::string>());
    return out.cast<Tensor>();
  };
  saved_tensors_hooks_scopes.push_back(
      std::make_unique<autograd::SavedTensorHooksGuard>(std::move(pack), std::move(unpack)));
}

void pop_saved_tensors_hooks() {
  TINYDDP_CHECK(!saved_tensors_hooks_scopes.empty(),
                "saved_tensors_hooks: __exit__ without a matching __enter__ on this thread.");
  saved_tensors_hooks_scopes.pop_back();
}

// checkpoint(fn, inputs): fn(*tensors) -> list of tensors is tinyddp/utils/checkpoint.py's wrapper around the
// user's function (it puts non-tensor arguments back and flattens the outputs). The engine may call it again
// in the backward (the recomputation), on the backward's thread, so it takes the GIL itself.
std::vector<Tensor> checkpoint(const py::function& fn, const std::vector<Tensor>& inputs, bool use_reentrant,
                               bool preserve_rng_state) {
  route_warnings_to_python();   // "None of the inputs have requires_grad=True": a UserWarning
  autograd::CheckpointFunction function = [ref = PyRef(fn)](const autograd::TensorList& args) -> autograd::TensorList {
    py::gil_scoped_acquire gil;
    py::tuple py_args(args.size());
    for (size_t i = 0; i < args.size(); ++i) py_args[i] = to_py(args[i]);
    return tensors_from_py(ref.get()(*py_args));
  };
  py::gil_scoped_release gil;
  return autograd::checkpoint(function, inputs,
                              {.use_reentrant = use_reentrant, .preserve_rng_state = preserve_rng_state});
}

// What a node's class is constructed from: node_to_py's private argument (a script cannot make a node).
struct NodeRef {
  std::shared_ptr<autograd::Node> node;
};

}  // namespace

// Note [A Python class per node name]
// In 1.13 every node's Python object is an instance of a class named after the node: type(y.grad_fn) prints
// <class 'MulBackward0'> (AccumulateGrad for a leaf's, <class 'torch.autograd.function.MyFnBackward'> for a
// custom Function's), and scripts print and compare type(grad_fn).__name__. Here the one bound class is
// _C.Node (or _C._CustomFunctionNode), so the first time a node is handed to Python its object is made as an
// instance of a subclass named after it, made once per name and kept. pybind11 keeps a registry of the
// objects alive per C++ pointer: while the script holds the object, node_to_py (and any cast) gives back that
// same object, so `y.grad_fn is y.grad_fn` and next_functions' nodes compare by identity as in 1.13.
py::object node_to_py(const std::shared_ptr<autograd::Node>& node) {
  if (!node) return py::none();
  // The object pybind11 registered is keyed by the pointer of the bound class the node is an instance of.
  const auto* as_custom = dynamic_cast<const autograd::CustomFunctionNode*>(node.get());
  const bool custom = as_custom != nullptr;
  const void* registered = custom ? static_cast<const void*>(as_custom) : static_cast<const void*>(node.get());
  const py::detail::type_info* bound =
      py::detail::get_type_info(custom ? typeid(autograd::CustomFunctionNode) : typeid(autograd::Node));
  if (py::handle alive = py::detail::get_object_handle(registered, bound))
    return py::reinterpret_borrow<py::object>(alive);
  static py::dict* const classes = new py::dict();   // (custom, name) -> class; never freed (lives with _C)
  const py::tuple key = py::make_tuple(custom, node->name());
  if (!classes->contains(key)) {
    py::dict body;
    body["__slots__"] = py::tuple();
    body["__module__"] = custom ? "torch.autograd.function" : "builtins";   // how 1.13 prints the class
    py::handle base = reinterpret_cast<PyObject*>(bound->type);
    (*classes)[key] = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
        node->name(), py::make_tuple(base), body);
  }
  return (*classes)[key](NodeRef{node});
}

namespace {

// Anomaly mode's forward stacks, as 1.13's python_anomaly_mode.cpp keeps and prints them: while the mode is on,
// every node created keeps traceback.format_stack() of the Python code that created it in its metadata dict
// under "traceback_" (the same dict as grad_fn.metadata), and a backward that fails at a node first warns with
// that stack. Called from the engine (engine/autograd/anomaly_mode.h) with or without the GIL; never throw.
const char* const kAnomalyTraceKey = "traceback_";

// Whether Python can be called: not before it starts, nor while it shuts down.
bool python_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

py::dict node_metadata(autograd::Node& n) {
  std::any& data = n.front_end_data();
  if (!data.has_value()) data = PyRef(py::dict());
  return std::any_cast<const PyRef&>(data).get();
}

void record_forward_stack(autograd::Node& n) {
  if (!python_alive()) return;
  py::gil_scoped_acquire gil;
  try {
    py::object stack = py::module_::import("tinyddp.autograd.anomaly_mode").attr("_format_stack")();
    node_metadata(n)[kAnomalyTraceKey] = stack;
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("recording the forward's stack for anomaly mode");
  } catch (const std::exception&) {
    // Runs inside a node's constructor: a stack that could not be kept must not fail the op.
  }
}

void warn_with_forward_stack(autograd::Node& n) {
  if (!python_alive()) return;
  py::gil_scoped_acquire gil;
  // The error on its way out is C++'s; Python's error indicator is clear here and must stay so.
  try {
    const py::dict metadata = node_metadata(n);
    std::string text = "Error detected in " + autograd::torch_name(n) + ". ";
    if (metadata.contains(kAnomalyTraceKey)) {
      text += "Traceback of forward call that caused the error:\n" +
              py::str("").attr("join")(metadata[kAnomalyTraceKey]).cast<std::string>() +
              " (Triggered internally at  ./torch/csrc/autograd/python_anomaly_mode.cpp:114.)";
    } else {   // the node was made before the mode was turned on
      text += "No forward pass information available. Enable detect anomaly during forward pass for more "
              "information. (Triggered internally at  ./torch/csrc/autograd/python_anomaly_mode.cpp:92.)";
    }
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) < 0) PyErr_Clear();   // warnings as errors: drop it
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("reporting the failing node's forward stack for anomaly mode");
  } catch (const std::exception&) {
    // Runs while the backward's error unwinds the engine: a failed report must not replace that error.
  }
}

}  // namespace

void bind_autograd(py::module_& m) {
  autograd::set_anomaly_observer({record_forward_stack, warn_with_forward_stack});
  py::class_<NodeRef>(m, "_NodeRef");
  py::class_<autograd::Node, std::shared_ptr<autograd::Node>>(m, "Node")
      .def(py::init([](const NodeRef& ref) { return ref.node; }))
      // 1.13 names its C++-only nodes with their namespace ("torch::autograd::AccumulateGrad"); the repr keeps
      // the bare class name, as there.
      .def("name", [](const autograd::Node& n) { return autograd::torch_name(n); })
      .def_property_readonly("next_functions", [](const autograd::Node& n) {
        py::list out;
        for (const autograd::Edge& e : n.next_edges())
          out.append(py::make_tuple(node_to_py(e.node), e.input_nr));
        return py::tuple(out);
      })
      // 1.13's grad_fn.metadata: a dict of the script's own, the same one for every access while the node lives
      // (kept on the node, so it outlasts the node's Python object).
      .def_property_readonly("metadata", [](autograd::Node& n) { return node_metadata(n); })
      // An AccumulateGrad's leaf, the script's own object for it (None once the leaf is gone); other nodes have
      // no such attribute, as in 1.13.
      .def_property_readonly("variable", [](py::object self) {
        const auto& n = self.cast<const autograd::Node&>();
        const auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(&n);
        if (acc == nullptr)
          throw py::attribute_error("'" + n.name() + "' object has no attribute 'variable'");
        return to_py_same(acc->leaf());
      })
      // grad_fn.register_hook(fn): fn(grad_inputs, grad_outputs) after the node ran (its outputs, the gradients
      // for its next edges, as grad_inputs; what reached it as grad_outputs; None for undefined ones), on the
      // backward's thread with the GIL taken back. 1.13 lets fn return replacements; tinyddp's post hooks only
      // observe, so a replacement is refused. What Module.register_backward_hook builds on.
      .def("register_hook", [](autograd::Node& n, const py::function& fn) {
        RemovableHandle handle;
        auto active = handle.active;
        n.add_post_hook([ref = PyRef(fn), active](const autograd::TensorList& outputs,
                                                   const autograd::TensorList& inputs) {
          if (!*active) return;
          py::gil_scoped_acquire gil;
          auto as_tuple = [](const autograd::TensorList& list) {
            py::tuple out(list.size());
            for (size_t i = 0; i < list.size(); ++i) out[i] = list[i].defined() ? to_py(list[i]) : py::none();
            return out;
          };
          py::object result = ref.get()(as_tuple(outputs), as_tuple(inputs));
          if (!result.is_none())
            throw py::value_error("tinyddp: a hook registered on a grad_fn (or with Module.register_backward_hook) "
                                  "returned new gradients; tinyddp's node hooks observe only. Use "
                                  "register_full_backward_hook or Tensor.register_hook to replace gradients.");
        });
        return handle;
      })
      // grad_fn.register_prehook(fn): fn(grad_outputs) before the node runs, with the gradients reaching it (a
      // tuple, None for undefined ones); a tuple (or list) it returns replaces them, None keeps them.
      .def("register_prehook", [](autograd::Node& n, const py::function& fn) {
        RemovableHandle handle;
        auto active = handle.active;
        n.add_list_pre_hook([ref = PyRef(fn), active](autograd::TensorList& grads) {
          if (!*active) return;
          py::gil_scoped_acquire gil;
          py::tuple args(grads.size());
          for (size_t i = 0; i < grads.size(); ++i) args[i] = grads[i].defined() ? to_py(grads[i]) : py::none();
          py::object result = ref.get()(args);
          if (result.is_none()) return;
          const std::vector<Tensor> replaced = tensors_from_py(result);
          if (replaced.size() != grads.size())
            throw py::value_error("hook returned an incorrect number of gradients (expected " +
                                  std::to_string(grads.size()) + ", got " + std::to_string(replaced.size()) + ")");
          for (size_t i = 0; i < grads.size(); ++i) grads[i] = replaced[i];
        });
        return handle;
      })
      // PyTorch's "<SumBackward0 object at 0x7f...>", the address being the node's (the same for each access).
      .def("__repr__", [](const autograd::Node& n) {
        std::ostringstream address;
        address << static_cast<const void*>(&n);
        return "<" + n.name() + " object at " + address.str() + ">";
      });

  // torch.autograd.Function (tinyddp/autograd/function.py): its node, whose backward is Python's, and 1.13's
  // wrapping of the forward's outputs (engine/autograd/custom_function.h).
  py::class_<autograd::CustomFunctionNode, autograd::Node, std::shared_ptr<autograd::CustomFunctionNode>>(
      m, "_CustomFunctionNode")
      .def(py::init(
          [](const NodeRef& ref) { return std::static_pointer_cast<autograd::CustomFunctionNode>(ref.node); }))
      .def("save", [](autograd::CustomFunctionNode& n, const py::object& tensors) { n.save(tensors_from_py(tensors)); })
      .def("set_materialize_grads", &autograd::CustomFunctionNode::set_materialize_grads)
      // 1.13's node is an instance of the Python class it makes per Function, in torch.autograd.function
      .def("__repr__", [](const autograd::CustomFunctionNode& n) {
        std::ostringstream address;
        address << static_cast<const void*>(&n);
        return "<torch.autograd.function." + n.name() + " object at " + address.str() + ">";
      });
  // backward(grads, saved) -> one gradient (or None) per tensor input; called on the backward's thread, under
  // the GIL it takes back.
  m.def("_custom_function_node", [](const std::string& name, const py::object& inputs, const py::function& backward) {
    autograd::CustomFunctionNode::Backward run = [fn = PyRef(backward)](const autograd::TensorList& grads,
                                                                       const autograd::TensorList& saved) {
      py::gil_scoped_acquire gil;
      py::tuple py_grads(grads.size()), py_saved(saved.size());
      for (size_t i = 0; i < grads.size(); ++i) py_grads[i] = to_py(grads[i]);
      for (size_t i = 0; i < saved.size(); ++i) py_saved[i] = to_py(saved[i]);
      return tensors_from_py(fn.get()(py_grads, py_saved));
    };
    return node_to_py(std::make_shared<autograd::CustomFunctionNode>(name, std::move(run), tensors_from_py(inputs)));
  });
  m.def("_wrap_custom_function_outputs",
        [](const std::shared_ptr<autograd::CustomFunctionNode>& node, const py::object& inputs,
           const py::object& outputs, const py::object& dirty, const py::object& non_differentiable) {
          const autograd::TensorList wrapped = autograd::wrap_custom_function_outputs(
              node, tensors_from_py(inputs), tensors_from_py(outputs), tensors_from_py(dirty),
              tensors_from_py(non_differentiable));
          py::list out;
          for (const Tensor& t : wrapped) out.append(to_py(t));
          return out;
        });

  py::class_<RemovableHandle>(m, "RemovableHandle").def("remove", &RemovableHandle::remove);

  auto cls = py::reinterpret_borrow<TensorClass>(m.attr("Tensor"));
  cls.def(
      "backward",
      [](const Tensor& t, const py::object& gradient, const py::object& retain_graph, bool create_graph,
         const py::object& inputs) {
        BackwardOptions options;
        options.retain_graph = optional_bool(retain_graph);
        options.create_graph = create_graph;
        if (auto listed = backward_inputs(inputs)) options.inputs = std::move(*listed);
        Tensor g = from_py(gradient);
        if (create_graph) py::module_::import("tinyddp.autograd").attr("_warn_create_graph")();
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
      // 1.13's checks of what a hook returns, with its texts and types (validate_outputs in its hook wrapper)
      if (!py::isinstance<Tensor>(out))
        throw py::type_error("expected Variable, but hook returned '" +
                             py::str(py::type::of(out).attr("__name__")).cast<std::string>() + "'");
      Tensor replaced = out.cast<Tensor>();
      const std::string name = py::str(py::getattr(ref.get(), "__name__", py::str("hook"))).cast<std::string>();
      TINYDDP_CHECK(replaced.shape() == grad.shape(), "hook '", name, "' has changed the size of value");
      TINYDDP_CHECK(replaced.dtype() == grad.dtype(), "hook '", name, "' has changed the type of value (was ",
                    legacy_type_name(grad.dtype()), " got ", legacy_type_name(replaced.dtype()), ")");
      return replaced;
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
    if (auto listed = backward_inputs(inputs)) options.inputs = std::move(*listed);
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

  // composite(name, inputs, fn) (engine/ops/composite.h): fn() runs the op's composition (a tensor, or a
  // sequence of tensors and Nones) with the GIL held; its results come back recorded as outputs of one node
  // named `name`, in the same form (a tensor, or a tuple).
  m.def("_composite", [](const std::string& name, const py::object& inputs, const py::function& fn,
                         const std::vector<size_t>& saved_outputs, const std::vector<size_t>& saved_inputs)
            -> py::object {
    bool single = false;
    autograd::TensorList outs = composite(name, tensors_from_py(inputs), [&]() {
      py::object result = fn();
      single = py::isinstance<Tensor>(result);
      return tensors_from_py(result);
    }, saved_outputs, saved_inputs);
    if (single) return to_py(outs[0]);
    py::list out;
    for (const Tensor& t : outs) out.append(to_py(t));
    return py::tuple(out);
  }, py::arg("name"), py::arg("inputs"), py::arg("fn"), py::arg("saved_outputs") = std::vector<size_t>{},
     py::arg("saved_inputs") = std::vector<size_t>{});
  m.def("_push_saved_tensors_default_hooks", &push_saved_tensors_hooks, py::arg("pack_hook"), py::arg("unpack_hook"));
  m.def("_pop_saved_tensors_default_hooks", &pop_saved_tensors_hooks);
  m.def("_checkpoint", &checkpoint, py::arg("function"), py::arg("inputs"), py::arg("use_reentrant"),
        py::arg("preserve_rng_state"));

  // Grad mode is per thread (each rank thread has its own), as PyTorch's.
  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("_set_grad_enabled", &GradMode::set_enabled);
  // Inference mode, per thread too (engine/core/inference_mode.h); autograd/grad_mode.py pairs it with grad mode.
  m.def("is_inference_mode_enabled", &InferenceMode::is_enabled);
  m.def("_set_inference_mode", &InferenceMode::set_enabled);
  m.def("_set_detect_anomaly", &autograd::set_detect_anomaly);
  m.def("is_anomaly_enabled", &autograd::is_anomaly_enabled);
}

}  // namespace tinyddp::python
