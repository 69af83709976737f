// Shared by the binding files of tinyddp._C: the conversions every file needs and the rule for holding
// Python objects inside C++ callbacks.
//
// GIL rule (STYLE.md, "Python front end"): every call into the engine, the reducer or a process group runs
// with the GIL released (py::call_guard<py::gil_scoped_release>); a C++ callback that calls Python (a hook,
// a module's forward, a warning) takes it back with py::gil_scoped_acquire. Ranks of the thread backend are
// threads of one interpreter, so a rank that waited in a collective while holding the GIL would stop the
// others from reaching it.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <vector>

#include "engine/tinyddp.h"

namespace tinyddp::python {

namespace py = pybind11;

// A Python object owned by C++ (a hook in the autograd graph): the graph may be freed on any thread, with or
// without the GIL, so the last reference is dropped under the GIL.
class PyRef {
 public:
  explicit PyRef(py::object obj) : obj_(std::make_shared<Holder>(std::move(obj))) {}
  const py::object& get() const { return obj_->obj; }

 private:
  struct Holder {
    explicit Holder(py::object o) : obj(std::move(o)) {}
    ~Holder() {
      if (!Py_IsInitialized()) {
        obj.release();   // the interpreter is gone: leak rather than touch it
        return;
      }
      py::gil_scoped_acquire gil;
      obj = py::object();
    }
    py::object obj;
  };
  std::shared_ptr<Holder> obj_;
};

// Routes this thread's C++ warnings (base/warning.h) to Python's warnings.warn(message, UserWarning), under the
// GIL, so that warnings.catch_warnings sees them. Idempotent; the handler stays for the thread's lifetime. Called
// on the thread that imports tinyddp, on spawn's rank threads, and by each binding whose C++ call can warn (for
// threads the user started).
void route_warnings_to_python();

// The holder of tinyddp._C.Tensor's Python objects: it records, per tensor (TensorImpl), the Python object made
// last for it while that object lives, so that the binding can give back the object a script holds rather than a
// new one (`v._base is y`, `p.grad is p.grad`, as PyTorch's one Python object per tensor). Made and destroyed with
// the Python object, under the GIL.
class TensorHolder {
 public:
  explicit TensorHolder(Tensor* t);
  TensorHolder(TensorHolder&& other) noexcept : t_(std::move(other.t_)) {}
  TensorHolder(const TensorHolder&) = delete;
  TensorHolder& operator=(const TensorHolder&) = delete;
  ~TensorHolder();
  Tensor* get() const { return t_.get(); }

 private:
  std::unique_ptr<Tensor> t_;
};
using TensorClass = py::class_<Tensor, TensorHolder>;

// Undefined tensors cross into Python as None, and None comes back as an undefined tensor.
py::object to_py(const Tensor& t);
// The live Python object of t's tensor when there is one (TensorHolder), else a new one; None when undefined.
py::object to_py_same(const Tensor& t);
Tensor from_py(const py::handle& obj);           // None -> undefined; else a Tensor (TypeError otherwise)
std::vector<Tensor> tensors_from_py(const py::handle& obj);   // a Tensor or a sequence of them (None kept as undefined)

// Sizes given as varargs (x.view(2, 3)) or as one sequence (x.view((2, 3)), torch.Size).
Shape shape_from_args(const py::args& args);

void bind_tensor(py::module_& m);
void bind_random(py::module_& m);   // after bind_tensor: adds methods to Tensor
void bind_autograd(py::module_& m);
// A graph node as Python sees it: an instance of a class named after the node (1.13's MulBackward0, ...), the
// same object for as long as the script holds it (Note [A Python class per node name]). None for null.
py::object node_to_py(const std::shared_ptr<autograd::Node>& node);
void bind_nn(py::module_& m);
void bind_dist(py::module_& m);
void bind_models(py::module_& m);
void bind_linalg(py::module_& m);

}  // namespace tinyddp::python

// tinyddp._C.Tensor's holder (py::class_<Tensor, TensorHolder>): pybind11 recognizes a holder by its caster.
namespace pybind11::detail {
template <>
class type_caster<tinyddp::python::TensorHolder>
    : public type_caster_holder<tinyddp::Tensor, tinyddp::python::TensorHolder> {};
}  // namespace pybind11::detail
