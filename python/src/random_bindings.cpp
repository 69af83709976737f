// tinyddp._C.Generator and the random ops (engine/ops/generator.h, ops.h): torch.Generator, torch.randn/rand/
// randint/randperm with generator=, and Tensor.uniform_/normal_/bernoulli_/random_. A generator given as None
// means the calling thread's default generator.
#include <random>

#include "bindings.h"

namespace tinyddp::python {

namespace {

using release = py::call_guard<py::gil_scoped_release>;
using GeneratorPtr = std::shared_ptr<Generator>;

Generator* generator_or_default(const GeneratorPtr& g) { return g ? g.get() : nullptr; }

// An in-place draw on `self`, returning the same Python object, as PyTorch's in-place methods do.
template <typename Fn>
py::object draw_in_place(py::object self, Fn fn) {
  Tensor& t = self.cast<Tensor&>();
  {
    py::gil_scoped_release gil;
    fn(t);
  }
  return self;
}

}  // namespace

void bind_random(py::module_& m) {
  // shared_ptr holder: a Python Generator owns its generator; the default generator is the thread's own and is
  // handed out by reference (it lives as long as the thread).
  py::class_<Generator, GeneratorPtr>(m, "Generator")
      .def(py::init<>())
      .def("manual_seed", [](py::object self, uint64_t seed) {
             self.cast<Generator&>().manual_seed(seed);
             return self;
           })
      .def("initial_seed", &Generator::initial_seed)
      // A non-deterministic seed, as torch.Generator.seed(): drawn from the OS and returned.
      .def("seed", [](Generator& g) {
             std::random_device device;
             const uint64_t seed = (static_cast<uint64_t>(device()) << 32) | device();
             g.manual_seed(seed);
             return seed;
           })
      .def("get_state", [](const Generator& g) { return py::bytes(g.state()); })
      .def("set_state", [](py::object self, const py::bytes& state) {
             self.cast<Generator&>().set_state(std::string(state));
             return self;
           });
  m.def("default_generator", []() -> Generator& { return default_generator(); }, py::return_value_policy::reference);

  m.def("randn", [](const Shape& s, DType d, const GeneratorPtr& g) { return randn(s, d, generator_or_default(g)); },
        py::arg("size"), py::arg("dtype"), py::arg("generator") = nullptr, release());
  m.def("rand", [](const Shape& s, DType d, const GeneratorPtr& g) { return rand(s, d, generator_or_default(g)); },
        py::arg("size"), py::arg("dtype"), py::arg("generator") = nullptr, release());
  m.def("randint", [](int64_t low, int64_t high, const Shape& s, const GeneratorPtr& g) {
          return randint(low, high, s, generator_or_default(g));
        }, py::arg("low"), py::arg("high"), py::arg("size"), py::arg("generator") = nullptr, release());
  m.def("randperm", [](int64_t n, const GeneratorPtr& g) { return randperm(n, generator_or_default(g)); },
        py::arg("n"), py::arg("generator") = nullptr, release());
  m.def("manual_seed", [](uint64_t seed) -> Generator& {
          default_generator().manual_seed(seed);
          return default_generator();
        }, py::return_value_policy::reference);

  auto tensor = py::reinterpret_borrow<TensorClass>(m.attr("Tensor"));
  tensor
      .def("uniform_", [](py::object self, double from, double to, const GeneratorPtr& g) {
             return draw_in_place(std::move(self), [&](Tensor& t) { uniform_(t, from, to, generator_or_default(g)); });
           }, py::arg("from") = 0.0, py::arg("to") = 1.0, py::kw_only(), py::arg("generator") = nullptr)
      .def("normal_", [](py::object self, double mean, double std, const GeneratorPtr& g) {
             return draw_in_place(std::move(self), [&](Tensor& t) { normal_(t, mean, std, generator_or_default(g)); });
           }, py::arg("mean") = 0.0, py::arg("std") = 1.0, py::kw_only(), py::arg("generator") = nullptr)
      .def("bernoulli_", [](py::object self, double p, const GeneratorPtr& g) {
             return draw_in_place(std::move(self), [&](Tensor& t) { bernoulli_(t, p, generator_or_default(g)); });
           }, py::arg("p") = 0.5, py::kw_only(), py::arg("generator") = nullptr)
      .def("random_", [](py::object self, const GeneratorPtr& g) {
             return draw_in_place(std::move(self), [&](Tensor& t) { random_(t, generator_or_default(g)); });
           }, py::kw_only(), py::arg("generator") = nullptr);
}

}  // namespace tinyddp::python
