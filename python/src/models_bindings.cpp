// models/experiments for Python: the deterministic multi-task data sets behind `tinyddp train` and the initial
// weights of their networks, so that a training loop written in Python (examples/gradnorm.py) starts from the
// same data and weights as the C++ loop and can be compared with it. The networks themselves are written in
// Python (tinyddp.nn); only their initial values cross over, by name.
#include "bindings.h"
#include "models/experiments/experiment.h"

namespace tinyddp::python {

namespace {

namespace ex = models::experiments;
using release = py::call_guard<py::gil_scoped_release>;

}  // namespace

void bind_models(py::module_& m) {
  py::module_ mod = m.def_submodule("_experiments", "models/experiments for tinyddp's examples and tests");
  py::class_<ex::Experiment, std::shared_ptr<ex::Experiment>>(mod, "Experiment")
      .def(py::init([](const std::string& name, uint64_t seed, DType dtype, int64_t train_rows, int64_t test_rows) {
             py::gil_scoped_release gil;
             return std::make_shared<ex::Experiment>(ex::make_experiment(
                 name, {.seed = seed, .dtype = dtype, .train_rows = train_rows, .test_rows = test_rows}));
           }),
           py::arg("name"), py::arg("seed") = 0, py::arg("dtype") = DType::f32, py::arg("train_rows") = 0,
           py::arg("test_rows") = 0)
      .def_readonly("name", &ex::Experiment::name)
      .def_readonly("description", &ex::Experiment::description)
      .def_readonly("task_names", &ex::Experiment::task_names)
      .def_property_readonly("default_batch_size", [](const ex::Experiment& e) { return e.defaults.batch_size; })
      .def_property_readonly("default_lr", [](const ex::Experiment& e) { return e.defaults.lr; })
      .def_property_readonly("default_alpha", [](const ex::Experiment& e) { return e.defaults.alpha; })
      // (x, [targets...]) of step `step`'s batch: rows walk the training set in order, as `tinyddp train`'s.
      .def("batch",
           [](const ex::Experiment& e, int64_t step, int64_t batch_size) {
             py::gil_scoped_release gil;
             models::MultiTaskBatch b = e.batch(step, batch_size);
             return std::make_pair(b.x, b.targets);
           },
           py::arg("step"), py::arg("batch_size"))
      // The named parameters of make_model(seed), in the C++ model's order (its dotted names, which a Python
      // module with the same layout reproduces); the calling thread's generator is reseeded, as in C++.
      .def("initial_parameters",
           [](const ex::Experiment& e, uint64_t seed) {
             py::gil_scoped_release gil;
             return e.make_model(seed)->named_parameters();
           },
           py::arg("seed"));
}

}  // namespace tinyddp::python
