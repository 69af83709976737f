// tinyddp._C: the compiled half of the Python package. The Python modules in python/tinyddp/ give it
// PyTorch's names; every behaviour lives in the C++ layers below (engine/, dist/, models/).
#include <iostream>

#include "base/warning.h"
#include "bindings.h"

namespace tinyddp::python {

void route_warnings_to_python() {
  thread_local WarningHandlerGuard to_python([](const std::string& message) {
    if (!Py_IsInitialized()) {   // a warning at interpreter exit: no Python left to warn with
      std::cerr << "Warning: " << message << std::endl;
      return;
    }
    py::gil_scoped_acquire gil;
    // With a filter turning warnings into errors this raises, as PyTorch's TORCH_WARN does under -W error.
    py::module_::import("warnings").attr("warn")(message, py::handle(PyExc_UserWarning));
  });
}

}  // namespace tinyddp::python

PYBIND11_MODULE(_C, m) {
  m.doc() = "tinyddp's engine, reducer and models, bound for the tinyddp Python package";
  tinyddp::python::route_warnings_to_python();
  // PyTorch's exception types where they are not RuntimeError (base/error.h); every other Error is one.
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tinyddp::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const tinyddp::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  tinyddp::python::bind_tensor(m);
  tinyddp::python::bind_random(m);
  tinyddp::python::bind_autograd(m);
  tinyddp::python::bind_nn(m);
  tinyddp::python::bind_dist(m);
  tinyddp::python::bind_models(m);
  tinyddp::python::bind_linalg(m);
}
