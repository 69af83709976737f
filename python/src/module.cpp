// tinyddp._C: the compiled half of the Python package. The Python modules in python/tinyddp/ give it
// PyTorch's names; every behaviour lives in the C++ layers below (engine/, dist/, models/).
#include "bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "tinyddp's engine, reducer and models, bound for the tinyddp Python package";
  tinyddp::python::bind_tensor(m);
  tinyddp::python::bind_autograd(m);
  tinyddp::python::bind_nn(m);
  tinyddp::python::bind_dist(m);
  tinyddp::python::bind_models(m);
}
