// The norms of torch.linalg and torch.norm (engine/ops/norm.cpp) and amax / amin (engine/ops/amax.cpp);
// tinyddp/linalg.py, _tensor_ops.norm and _tensor_forms.amax parse PyTorch's arguments (ord as a number, dim as
// None, an int or a sequence) and call these.
#include "bindings.h"

namespace tinyddp::python {

void bind_linalg(py::module_& m) {
  using release = py::call_guard<py::gil_scoped_release>;
  m.def("_linalg_vector_norm", &linalg_vector_norm, py::arg("input"), py::arg("ord"), py::arg("dims"),
        py::arg("keepdim"), py::arg("dtype"), release());
  m.def("_norm", &norm, py::arg("input"), py::arg("p"), py::arg("dims"), py::arg("keepdim"), py::arg("dtype"),
        release());
  m.def("_amax", &amax, py::arg("input"), py::arg("dims"), py::arg("keepdim"), release());
  m.def("_amin", &amin, py::arg("input"), py::arg("dims"), py::arg("keepdim"), release());
}

}  // namespace tinyddp::python
