// tinyddp._C.Tensor and the tensor factories: each method converts its arguments and calls the engine
// (engine/core/tensor.h, engine/ops/ops.h) with the GIL released. What is Python-only presentation (repr,
// torch.Size, dtype objects) lives in tinyddp/_tensor.py.
#include <pybind11/numpy.h>

#include <cstring>
#include <unordered_map>

#include "bindings.h"

namespace tinyddp::python {

py::object to_py(const Tensor& t) { return t.defined() ? py::cast(t) : py::none(); }

namespace {
// TensorHolder's record: per TensorImpl, the Tensor inside the Python object made last for it (still alive).
std::unordered_map<const TensorImpl*, const Tensor*>& live_objects() {
  static auto* objects = new std::unordered_map<const TensorImpl*, const Tensor*>();   // never destroyed: holders
  return *objects;                                                                     // may outlive statics
}
}  // namespace

TensorHolder::TensorHolder(Tensor* t) : t_(t) {
  if (t_ && t_->defined()) live_objects()[t_->impl()] = t_.get();
}

TensorHolder::~TensorHolder() {
  if (!t_ || !t_->defined()) return;
  auto& objects = live_objects();
  const auto it = objects.find(t_->impl());
  if (it != objects.end() && it->second == t_.get()) objects.erase(it);
}

py::object to_py_same(const Tensor& t) {
  if (!t.defined()) return py::none();
  const auto& objects = live_objects();
  const auto it = objects.find(t.impl());
  if (it != objects.end()) {
    const py::handle h = py::detail::get_object_handle(it->second, py::detail::get_type_info(typeid(Tensor)));
    if (h) return py::reinterpret_borrow<py::object>(h);
  }
  return py::cast(t);
}

Tensor from_py(const py::handle& obj) {
  if (obj.is_none()) return Tensor();
  return obj.cast<Tensor>();
}

std::vector<Tensor> tensors_from_py(const py::handle& obj) {
  if (py::isinstance<Tensor>(obj)) return {obj.cast<Tensor>()};
  std::vector<Tensor> out;
  for (py::handle item : obj) out.push_back(from_py(item));
  return out;
}

// An integer as PyTorch's parser takes one for a size or a dim: a Python int or anything with __index__ (a NumPy
// integer), but not a tensor (a sequence of sizes, or an error, there).
namespace {
bool is_integer(const py::handle& o) { return PyIndex_Check(o.ptr()) && !py::isinstance<Tensor>(o); }
}  // namespace

Shape shape_from_args(const py::args& args) {
  if (args.size() == 1 && !is_integer(args[0])) return args[0].cast<Shape>();
  return args.cast<Shape>();
}

namespace {

using release = py::call_guard<py::gil_scoped_release>;

// dim=None | int | sequence of ints, as Tensor.sum's.
std::optional<std::vector<int64_t>> dims_from_py(const py::object& dim) {
  if (dim.is_none()) return std::nullopt;
  if (is_integer(dim)) return std::vector<int64_t>{dim.cast<int64_t>()};
  return dim.cast<std::vector<int64_t>>();
}

template <typename Op>
py::object reduce(const Tensor& x, const py::object& dim, bool keepdim, Op op) {
  const auto dims = dims_from_py(dim);
  py::gil_scoped_release gil;
  Tensor out = dims ? op(x, *dims, keepdim) : op(x, std::vector<int64_t>{}, false);
  py::gil_scoped_acquire back;
  return py::cast(out);
}

// Nested Python lists of the elements, row-major (Tensor.tolist()).
py::object nested_list(const Shape& shape, size_t dim, const py::list& flat, size_t& pos) {
  if (dim == shape.size()) return flat[pos++];
  py::list out;
  for (int64_t i = 0; i < shape[dim]; ++i) out.append(nested_list(shape, dim + 1, flat, pos));
  return out;
}

py::list flat_list(const Tensor& t) {
  py::list out;
  if (t.dtype() == DType::b8) {
    std::vector<int64_t> v;
    {
      py::gil_scoped_release gil;
      v = t.to_vector<int64_t>();
    }
    for (int64_t x : v) out.append(py::bool_(x != 0));
  } else if (t.dtype() == DType::i64) {
    std::vector<int64_t> v;
    {
      py::gil_scoped_release gil;
      v = t.to_vector<int64_t>();
    }
    for (int64_t x : v) out.append(x);
  } else {
    std::vector<double> v;
    {
      py::gil_scoped_release gil;
      v = t.to_vector<double>();
    }
    for (double x : v) out.append(x);
  }
  return out;
}

// A NumPy array over the tensor's own storage (as PyTorch's Tensor.numpy(): writes are seen by both). The
// capsule keeps the storage alive as long as the array.
py::array numpy_view(const Tensor& t) {
  TINYDDP_CHECK(!t.requires_grad(), "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                    "instead.");
  TINYDDP_CHECK(t.device().is_cpu(), "can't convert ", t.device().str(), " device type tensor to numpy. Use "
                                     "Tensor.cpu() to copy the tensor to host memory first.");
  auto* keep = new Tensor(t);
  py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  const size_t elem = element_size(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
  for (int64_t s : t.strides()) strides.push_back(static_cast<py::ssize_t>(s * static_cast<int64_t>(elem)));
  switch (t.dtype()) {
    case DType::f32: return py::array_t<float>(shape, strides, t.data_ptr<float>(), owner);
    case DType::f64: return py::array_t<double>(shape, strides, t.data_ptr<double>(), owner);
    case DType::i64: return py::array_t<int64_t>(shape, strides, t.data_ptr<int64_t>(), owner);
    case DType::b8: return py::array_t<bool>(shape, strides, t.data_ptr<bool>(), owner);
  }
  throw Error("numpy: unknown dtype");
}

// A copy of a NumPy array (tinyddp's storage cannot adopt foreign memory: see docs/python.md).
template <typename T>
Tensor copy_array(const py::array& a, DType dtype) {
  auto c = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  Shape shape(c.shape(), c.shape() + c.ndim());
  std::vector<T> values(c.data(), c.data() + c.size());
  py::gil_scoped_release gil;
  return from_vector(values, shape, dtype);
}

// dtypes compare by value: an array unpickled (or made with np.dtype("<f4")) has a dtype object of its own, equal
// to, but not the same object as, NumPy's float32.
Tensor from_numpy(const py::array& a) {
  const py::dtype dt = a.dtype();
  if (dt.equal(py::dtype::of<float>())) return copy_array<float>(a, DType::f32);
  if (dt.equal(py::dtype::of<double>())) return copy_array<double>(a, DType::f64);
  if (dt.equal(py::dtype::of<int64_t>())) return copy_array<int64_t>(a, DType::i64);
  if (dt.equal(py::dtype::of<bool>())) return copy_array<int64_t>(a, DType::b8);   // 0/1 through int64
  throw py::type_error("can't convert np.ndarray of type " + dt.attr("name").cast<std::string>() +
                       ". The only supported types are: float64, float32, int64 and bool.");
}

// ---- storages, for tinyddp.serialization and copy.deepcopy (PyTorch's Tensor.storage(), set_()) ----
// A tensor's storage is what torch.save writes once however many tensors view it: its bytes, and per tensor
// (storage offset, size, stride) in elements.

// The whole storage as a 1-D contiguous tensor of `t`'s dtype, without history (a leaf sharing the storage and
// version counter, as detach() does).
Tensor storage_tensor(const Tensor& t) {
  const size_t elem = element_size(t.dtype());
  TINYDDP_CHECK(t.storage()->nbytes % elem == 0, "the storage holds ", t.storage()->nbytes,
                " bytes, not a whole number of ", dtype_name(t.dtype()), " elements");
  return make_view(t, {static_cast<int64_t>(t.storage()->nbytes / elem)}, {1}, 0);
}

// A view of `base`'s storage (PyTorch's set_(storage, offset, size, stride) / as_strided), a leaf without history.
// Every element it can reach must lie inside the storage: a checkpoint's sizes are checked here.
Tensor as_strided(const Tensor& base, const Shape& shape, const Shape& strides, int64_t offset) {
  TINYDDP_CHECK(shape.size() == strides.size(), "as_strided: got ", shape.size(), " sizes but ", strides.size(),
                " strides");
  const int64_t numel = static_cast<int64_t>(base.storage()->nbytes / element_size(base.dtype()));
  int64_t last = offset;   // the largest element index the view reaches
  bool empty_view = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    TINYDDP_CHECK(shape[d] >= 0 && strides[d] >= 0, "as_strided: negative size or stride in size ",
                  shape_str(shape), ", stride ", shape_str(strides));
    if (shape[d] == 0) empty_view = true;
    else last += (shape[d] - 1) * strides[d];
  }
  TINYDDP_CHECK(offset >= 0 && (empty_view || last < numel), "as_strided: size ", shape_str(shape), ", stride ",
                shape_str(strides), " and storage offset ", offset, " reach element ", last,
                " of a storage of ", numel, " elements");
  return make_view(base, shape, strides, offset);
}

// The raw bytes of a contiguous CPU tensor's elements, host (little-endian) order.
py::bytes raw_bytes(const Tensor& t) {
  TINYDDP_CHECK(t.is_contiguous() && t.device().is_cpu(), "raw bytes of a non-contiguous or device tensor");
  const size_t n = static_cast<size_t>(t.numel()) * element_size(t.dtype());
  return py::bytes(n ? static_cast<const char*>(t.raw_data()) : "", n);
}

// A new 1-D tensor holding a copy of `buffer`'s bytes as elements of `dtype`.
Tensor from_bytes(const py::buffer& buffer, DType dtype) {
  const py::buffer_info info = buffer.request();
  const size_t nbytes = static_cast<size_t>(info.size * info.itemsize), elem = element_size(dtype);
  TINYDDP_CHECK(nbytes % elem == 0, "from_bytes: ", nbytes, " bytes are not a whole number of ",
                dtype_name(dtype), " elements");
  Tensor t = empty({static_cast<int64_t>(nbytes / elem)}, dtype);
  if (nbytes) std::memcpy(t.raw_data(), info.ptr, nbytes);
  return t;
}

// Python number lists of tinyddp.tensor(), already flattened by tinyddp/_tensor.py.
Tensor from_flat(const py::list& values, const Shape& shape, DType dtype) {
  if (dtype == DType::i64 || dtype == DType::b8) {
    std::vector<int64_t> v;
    for (const auto& x : values) v.push_back(py::isinstance<py::bool_>(x) ? x.cast<bool>() : x.cast<int64_t>());
    py::gil_scoped_release gil;
    return from_vector(v, shape, dtype);
  }
  auto v = values.cast<std::vector<double>>();
  py::gil_scoped_release gil;
  return from_vector(v, shape, dtype);
}

// The other operand of a binary op: a tensor, or a Python number wrapped as PyTorch's Python wraps it (bool,
// int -> int64, float -> float64, marked as a wrapped number so that it promotes below every tensor: `t * 2`
// keeps an int64 t int64, `t * 0.5` makes it float32), on `like`'s device. Nothing for any other object.
std::optional<Tensor> operand(const Tensor& like, const py::handle& o) {
  if (py::isinstance<Tensor>(o)) return o.cast<Tensor>();
  if (py::isinstance<py::bool_>(o)) return wrapped_number(o.cast<bool>(), like.device());
  if (py::isinstance<py::int_>(o)) {
    const int64_t v = PyLong_AsLongLong(o.ptr());
    if (v == -1 && PyErr_Occurred()) {   // past int64, as 1.13 says it
      PyErr_Clear();
      throw Error("Overflow when unpacking long");
    }
    return wrapped_number(v, like.device());
  }
  if (py::isinstance<py::float_>(o)) return wrapped_number(o.cast<double>(), like.device());
  // NumPy scalars (np.int64, np.float32): numbers too. Arrays and anything that does not convert are left to the
  // other operand's reflected operator (NotImplemented), as before.
  if (py::isinstance<py::array>(o) || py::isinstance<py::str>(o)) return std::nullopt;
  try {
    if (py::hasattr(o, "__index__")) return wrapped_number(o.cast<int64_t>(), like.device());
    if (py::hasattr(o, "__float__")) return wrapped_number(o.cast<double>(), like.device());
  } catch (const py::cast_error&) {
  }
  return std::nullopt;
}

Tensor operand_or_throw(const Tensor& like, const py::handle& o) {
  std::optional<Tensor> t = operand(like, o);
  if (!t)
    throw py::type_error("expected a Tensor or a number, but got " +
                         py::str(o.get_type().attr("__name__")).cast<std::string>());
  return *t;
}

// A binary operator: fn(self, other) with the GIL released; NotImplemented for an operand that is neither a
// tensor nor a number (so that `t == None` is False and Python tries the reflected operator).
template <typename Fn>
auto binary_operator(Fn fn) {
  return [fn](const Tensor& a, const py::object& b) -> py::object {
    std::optional<Tensor> other = operand(a, b);
    if (!other) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    Tensor out;
    {
      py::gil_scoped_release gil;
      out = fn(a, *other);
    }
    return py::cast(out);
  };
}

// In-place methods return the same Python object, as PyTorch's do.
template <typename Fn>
auto inplace(Fn fn) {
  return [fn](py::object self, py::args args) {
    Tensor& t = self.cast<Tensor&>();
    fn(t, args);
    return self;
  };
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::enum_<DType>(m, "DType")
      .value("f32", DType::f32)
      .value("f64", DType::f64)
      .value("i64", DType::i64)
      .value("b8", DType::b8);

  TensorClass cls(m, "Tensor", py::dynamic_attr());
  cls.def(py::init([](const Tensor& other) { return other; }), "A new handle to `other` (same autograd identity).")
      // The rest of 1.13's legacy constructor, torch.Tensor(*sizes) / (sequence) / (): tinyddp/_legacy.py.
      .def(py::init([](const py::args& args, const py::kwargs& kwargs) {
        return py::module_::import("tinyddp._legacy").attr("tensor_new")(*args, **kwargs).cast<Tensor>();
      }))
      .def("_shape", [](const Tensor& t) { return t.shape(); })
      .def("sin", [](const Tensor& t) { return sin(t); }, release())
      .def("erf", [](const Tensor& t) { return erf(t); }, release())
      .def("cos", [](const Tensor& t) { return cos(t); }, release())
      .def("log1p", [](const Tensor& t) { return log1p(t); }, release())
      .def("expm1", [](const Tensor& t) { return expm1(t); }, release())
      .def("floor", [](const Tensor& t) { return floor(t); }, release())
      .def("ceil", [](const Tensor& t) { return ceil(t); }, release())
      .def("trunc", [](const Tensor& t) { return trunc(t); }, release())
      .def("round", [](const Tensor& t) { return round(t); }, release())
      // PyTorch's `t.data = new`: the handle keeps its autograd identity and sees new's storage (leaves only).
      .def("_set_data", &Tensor::set_data, release())
      .def("_dtype", &Tensor::dtype)
      .def("_is_same", &Tensor::is_same)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def_property_readonly("_version",   // an int attribute, as PyTorch's
                             [](const Tensor& t) {
                               TINYDDP_CHECK(!t.is_inference(), "Inference tensors do not track version counter.");
                               return t.version();
                             })
      .def("is_inference", &Tensor::is_inference)
      .def("detach_",
           [](py::object self) {
             self.cast<Tensor&>().detach_();
             return self;
           })
      .def("item",
           [](const Tensor& t) -> py::object {
             if (!t.defined() || t.numel() != 1)   // PyTorch's Python text and type
               throw ValueError("only one element tensors can be converted to Python scalars");
             if (t.dtype() == DType::b8) {
               int64_t v;
               {
                 py::gil_scoped_release gil;
                 v = t.to(DType::i64).item<int64_t>();
               }
               return py::bool_(v != 0);
             }
             if (t.dtype() == DType::i64) {
               int64_t v;
               {
                 py::gil_scoped_release gil;
                 v = t.item<int64_t>();
               }
               return py::int_(v);
             }
             double v;
             {
               py::gil_scoped_release gil;
               v = t.item<double>();
             }
             return py::float_(v);
           })
      .def("tolist",
           [](const Tensor& t) {
             py::list flat = flat_list(t);
             size_t pos = 0;
             return nested_list(t.shape(), 0, flat, pos);
           })
      .def("numpy", &numpy_view)
      .def("storage_offset", &Tensor::offset)
      .def("stride", [](const Tensor& t, const py::object& dim) -> py::object {
             if (dim.is_none()) return py::tuple(py::cast(t.strides()));
             const int64_t d = dim.cast<int64_t>(), n = t.dim();
             if (n == 0)   // PyTorch's texts
               throw py::index_error("Dimension specified as " + std::to_string(d) + " but tensor has no dimensions");
             if (d < -n || d >= n)
               throw py::index_error("Dimension out of range (expected to be in range of [" + std::to_string(-n) +
                                     ", " + std::to_string(n - 1) + "], but got " + std::to_string(d) + ")");
             return py::int_(t.strides()[static_cast<size_t>((d + n) % n)]);
           }, py::arg("dim") = py::none())
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()); })
      .def("_storage_key", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage().get()); })
      .def("_storage_nbytes", [](const Tensor& t) { return t.storage()->nbytes; })
      .def("_storage_tensor", &storage_tensor)
      .def("_as_strided", &as_strided, py::arg("size"), py::arg("stride"), py::arg("storage_offset"))
      .def("_raw_bytes", &raw_bytes)
      // ---- autograd ----
      .def_property(
          "requires_grad", &Tensor::requires_grad,
          [](Tensor& t, bool value) {
            // 1.13's setter refuses a non-leaf either way; requires_grad_() only refuses False (the engine).
            TINYDDP_CHECK(t.is_leaf() || !value, "you can only change requires_grad flags of leaf variables.");
            TINYDDP_CHECK(!value || is_floating(t.dtype()),   // the setter's text (requires_grad_() has its own)
                          "only Tensors of floating point and complex dtype can require gradients");
            t.requires_grad_(value);
          },
          release())
      .def("requires_grad_",
           [](py::object self, bool requires_grad) {
             self.cast<Tensor&>().requires_grad_(requires_grad);
             return self;
           },
           py::arg("requires_grad") = true)
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      // Views (Note [In-place ops under autograd]): _base is the tensor a view op's output reads, the script's own
      // Python object for it while one lives (to_py_same).
      .def("_is_view", &Tensor::is_view)
      .def("_variable_data", &Tensor::variable_data)
      .def_property_readonly("_base", [](const Tensor& t) { return to_py_same(t.view_base()); })
      // The in-place form of an out-of-place op, `fn(current)` computing the result (apply_inplace in
      // engine/ops/ops.h); `others`: fn's other tensor inputs. Holds the GIL: fn is Python.
      .def("_apply_inplace",
           [](py::object self, const py::function& fn, const py::handle& others, bool overlap_check) {
             Tensor& t = self.cast<Tensor&>();
             apply_inplace(t, tensors_from_py(others), [&fn](const Tensor& current) {
               const py::object out = fn(py::cast(current));
               TINYDDP_CHECK(py::isinstance<Tensor>(out), "an in-place op's function returned ",
                             std::string(py::str(out.get_type())), ", not a tensor.");
               return out.cast<Tensor>();
             }, overlap_check);
             return self;
           }, py::arg("fn"), py::arg("others"), py::arg("overlap_check") = true)
      // self overwritten by fn() (engine/ops/ops.h's overwrite_: the random fills of Python, exponential_ ..., and
      // the in-place ops whose 1.13 node gives no gradient): `name` is 1.13's node under autograd. Holds the GIL: fn
      // is Python.
      .def("_overwrite_",
           [](py::object self, const char* name, const py::function& fn, const py::handle& others,
              const std::string& not_implemented) {
             Tensor& t = self.cast<Tensor&>();
             overwrite_(t, name, [&fn] { return fn().cast<Tensor>(); }, tensors_from_py(others), not_implemented);
             return self;
           }, py::arg("name"), py::arg("fn"), py::arg("others") = py::tuple(), py::arg("not_implemented") = "")
      .def_property_readonly("retains_grad", &Tensor::retains_grad)
      .def_property(
          "grad",
          [](const Tensor& t) {
            if (!t.is_leaf() && !t.retains_grad() && !t.grad().defined())   // 1.13's TORCH_WARN, as it prints it
              py::module_::import("warnings")
                  .attr("warn")("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                                "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you "
                                "access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
                                "informations. (Triggered internally at  ./build/aten/src/ATen/core/"
                                "TensorBody.h:480.)",
                                py::handle(PyExc_UserWarning));
            return to_py_same(t.grad());
          },
          [](py::object self, const py::object& g) {   // 1.13's checks, in its order and words
            if (!g.is_none() && !py::isinstance<Tensor>(g))
              throw py::type_error("assigned grad expected to be a Tensor or None but got grad of type" +
                                   py::str(py::type::handle_of(g).attr("__name__")).cast<std::string>());
            const Tensor& t = self.cast<const Tensor&>();
            if (g.is(self)) throw std::runtime_error("can't assign Variable as its own grad");
            const Tensor grad = g.is_none() ? Tensor() : g.cast<Tensor>();
            if (grad.defined() && grad.dtype() != t.dtype())
              throw std::runtime_error("assigned grad has data of a different type");
            t.set_grad(grad);
          })
      .def_property_readonly("grad_fn", [](const Tensor& t) { return node_to_py(t.grad_fn()); })
      .def("detach", &Tensor::detach, release())
      .def("retain_grad", &Tensor::retain_grad, release())
      // ---- math (sugar over engine/ops) ----
      .def("exp", &Tensor::exp, release())
      .def("log", &Tensor::log, release())
      .def("sqrt", &Tensor::sqrt, release())
      .def("abs", &Tensor::abs, release())
      .def("relu", &Tensor::relu, release())
      .def("tanh", &Tensor::tanh, release())
      .def("sigmoid", &Tensor::sigmoid, release())
      .def("t", &Tensor::t, release())
      .def("clone", &Tensor::clone, release())
      .def("contiguous", &Tensor::contiguous, release())
      .def("transpose", &Tensor::transpose, release())
      .def("narrow", &Tensor::narrow, py::arg("dim"), py::arg("start"), py::arg("length"), release())
      .def("matmul", [](const Tensor& a, const Tensor& b) { return pytorch_matmul(a, b); }, release())
      .def("_to_dtype", [](const Tensor& t, DType d) { return t.to(d); }, release())
      .def("sum", [](const Tensor& t, const py::object& dim, bool keepdim) {
             return reduce(t, dim, keepdim, [](const Tensor& x, const std::vector<int64_t>& d, bool k) {
               return d.empty() ? sum(x) : sum(x, d, k);
             });
           }, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("mean", [](const Tensor& t, const py::object& dim, bool keepdim) {
             return reduce(t, dim, keepdim, [](const Tensor& x, const std::vector<int64_t>& d, bool k) {
               return d.empty() ? mean(x) : mean(x, d, k);
             });
           }, py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("view", [](const Tensor& t, const py::args& a) {
             if (a.size() == 0)   // 1.13's argument parser refuses a view of no sizes
               throw py::type_error("view() received an invalid combination of arguments - got (), but expected one "
                                    "of:\n * (torch.dtype dtype)\n * (tuple of SymInts size)\n");
             Shape s = shape_from_args(a);
             py::gil_scoped_release gil;
             return t.view(s);
           })
      .def("reshape", [](const Tensor& t, const py::args& a) {
             if (a.size() == 0)
               throw py::type_error("reshape() missing 1 required positional arguments: \"shape\"");
             Shape s = shape_from_args(a);
             py::gil_scoped_release gil;
             return t.reshape(s);
           })
      // ---- in place ----
      .def("copy_", inplace([](Tensor& t, const py::args& a) {
             Tensor src = a[0].cast<Tensor>();
             py::gil_scoped_release gil;
             t.copy_(src);
           }))
      .def("zero_", inplace([](Tensor& t, const py::args&) {
             py::gil_scoped_release gil;
             t.zero_();
           }))
      // A number (FillBackward2 under autograd) or a 0-dim tensor (FillBackward3).
      .def("fill_", inplace([](Tensor& t, const py::args& a) {
             if (py::isinstance<Tensor>(a[0])) {
               const Tensor value = a[0].cast<Tensor>();
               py::gil_scoped_release gil;
               fill_(t, value);
               return;
             }
             double v = a[0].cast<double>();
             py::gil_scoped_release gil;
             t.fill_(v);
           }))
      // In-place view ops (engine/ops/ops.h): the tensor's own shape and strides change, TBackward1 ... under
      // autograd.
      .def("t_", inplace([](Tensor& t, const py::args&) {
             py::gil_scoped_release gil;
             t_(t);
           }))
      .def("transpose_", [](py::object self, int64_t dim0, int64_t dim1) {
             Tensor& t = self.cast<Tensor&>();
             {
               py::gil_scoped_release gil;
               transpose_(t, dim0, dim1);
             }
             return self;
           }, py::arg("dim0"), py::arg("dim1"))
      .def("squeeze_", [](py::object self, std::optional<int64_t> dim) {
             Tensor& t = self.cast<Tensor&>();
             {
               py::gil_scoped_release gil;
               squeeze_(t, dim);
             }
             return self;
           }, py::arg("dim") = py::none())
      .def("unsqueeze_", [](py::object self, int64_t dim) {
             Tensor& t = self.cast<Tensor&>();
             {
               py::gil_scoped_release gil;
               unsqueeze_(t, dim);
             }
             return self;
           }, py::arg("dim"))
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return pytorch_matmul(a, b); }, py::is_operator(),
           release())
      .def("__neg__", [](const Tensor& a) { return neg(a); }, release())
      .def("__abs__", [](const Tensor& a) { return abs(a); }, release());

  // ---- operators: tensors, Python bools, ints and floats on either side; NumPy broadcasting ----
  // A Python number is wrapped as PyTorch's Python does (operand above) and the engine's tensor-tensor op
  // promotes, so `w * 2` records MulBackward0 (and `w / 2` divides, as PyTorch's). The wrapped number does not
  // require grad: its gradient is never computed.
  cls.def("__add__", binary_operator([](const Tensor& a, const Tensor& b) { return add(a, b); }), py::is_operator())
      .def("__radd__", binary_operator([](const Tensor& a, const Tensor& b) { return add(a, b); }), py::is_operator())
      .def("__sub__", binary_operator([](const Tensor& a, const Tensor& b) { return sub(a, b); }), py::is_operator())
      .def("__mul__", binary_operator([](const Tensor& a, const Tensor& b) { return mul(a, b); }), py::is_operator())
      .def("__rmul__", binary_operator([](const Tensor& a, const Tensor& b) { return mul(a, b); }), py::is_operator())
      .def("__truediv__", binary_operator([](const Tensor& a, const Tensor& b) { return div(a, b); }),
           py::is_operator())
      // number - t: a floating t as the engine's scalar op (AddBackward1 over NegBackward0), recorded as 1.13's
      // RsubBackward1; else the promoted sub (an int64 t stays int64; a bool t or True gives sub's error).
      .def("__rsub__", binary_operator([](const Tensor& a, const Tensor& b) {
             if (is_floating(a.dtype()) && b.is_wrapped_number() && b.dtype() != DType::b8) {
               const double number = b.to(DType::f64).item<double>();
               return composite("RsubBackward1", {a}, [&] { return autograd::TensorList{number - a}; })[0];
             }
             return sub(b, a);
           }), py::is_operator())
      // PyTorch: number / t = t.reciprocal() * number (MulBackward0 over ReciprocalBackward0; float32 for an int64 t).
      .def("__rtruediv__", binary_operator([](const Tensor& a, const Tensor& b) {
             return mul(composite("ReciprocalBackward0", {a}, [&] { return autograd::TensorList{pow(a, -1.0)}; })[0], b);
           }), py::is_operator())
      // t ** n: an int (or bool) exponent keeps an int64 t int64; a float exponent makes it float32.
      // t ** u and number ** t: the promoted pow of two tensors (PowBackward1; PowBackward2 for a number base).
      .def("__rpow__", binary_operator([](const Tensor& a, const Tensor& b) { return pow(b, a); }), py::is_operator())
      .def("__pow__", [](const Tensor& a, const py::object& e) -> py::object {
             Tensor out;
             if (py::isinstance<Tensor>(e)) {
               const Tensor exponent = e.cast<Tensor>();
               py::gil_scoped_release gil;
               out = pow(a, exponent);
             }
             if (out.defined()) return py::cast(out);
             const bool integral = py::isinstance<py::bool_>(e) || py::isinstance<py::int_>(e);
             if (!integral && !py::isinstance<py::float_>(e))
               return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             // A bool exponent promotes with a bool tensor to bool, which has no pow kernel in 1.13 either.
             TINYDDP_CHECK(!py::isinstance<py::bool_>(e) || a.dtype() != DType::b8,
                           "\"pow\" not implemented for 'Bool'");
             if (integral) {
               const int64_t n = e.cast<int64_t>();
               py::gil_scoped_release gil;
               out = pow_integer(a, n);
             } else {
               const double p = e.cast<double>();
               py::gil_scoped_release gil;
               out = pow(a, p);
             }
             return py::cast(out);
           }, py::is_operator())
      // In place: PyTorch's promotion, then its cast check into self's dtype (`int_t += 0.5` raises).
      .def("__iadd__", inplace([](Tensor& t, const py::args& a) {
             Tensor other = operand_or_throw(t, a[0]);
             py::gil_scoped_release gil;
             t.add_(other);
           }), py::is_operator())
      .def("__isub__", inplace([](Tensor& t, const py::args& a) {
             Tensor other = operand_or_throw(t, a[0]);
             py::gil_scoped_release gil;
             sub_(t, other);
           }), py::is_operator())
      // t /= u: in place as PyTorch's (`int_t /= 2` raises its cast error; on a tensor with history DivBackward0).
      .def("__itruediv__", inplace([](Tensor& t, const py::args& a) {
             Tensor other = operand_or_throw(t, a[0]);
             py::gil_scoped_release gil;
             div_(t, other);
           }), py::is_operator())
      .def("__imul__", inplace([](Tensor& t, const py::args& a) {
             // The engine's scalar fast path, when nothing is recorded (recorded, a Python number is a wrapped
             // tensor: MulBackward0, as PyTorch's Python records it).
             if (is_floating(t.dtype()) && py::isinstance<py::float_>(a[0]) &&
                 !(GradMode::is_enabled() && t.requires_grad())) {
               double f = a[0].cast<double>();
               py::gil_scoped_release gil;
               t.mul_(f);
               return;
             }
             Tensor other = operand_or_throw(t, a[0]);
             py::gil_scoped_release gil;
             t.mul_(other);
           }), py::is_operator());

  // PyTorch's in-place arithmetic methods (the version bumps once; a Python number is wrapped as a tensor).
  auto operand = [](const Tensor& t, const py::object& o) { return operand_or_throw(t, o); };
  // add_(Number alpha, Tensor other), the pre-1.0 order old scripts still use (`p.data.add_(-lr, p.grad.data)`):
  // 1.13 takes it with its deprecation warning. Returns the alpha of that form, or nothing.
  const auto deprecated_alpha = [](const char* op, py::object& other, const py::object& second) -> std::optional<double> {
    if (second.is_none()) return std::nullopt;
    if (py::isinstance<Tensor>(other) || !py::isinstance<Tensor>(second))
      throw py::type_error(std::string(op) + "() takes 1 positional argument but 2 were given");
    const double alpha = other.cast<double>();
    py::module_::import("warnings").attr("warn")(
        std::string("This overload of ") + op + " is deprecated:\n\t" + op + "(Number alpha, Tensor other)\nConsider "
        "using one of the following signatures instead:\n\t" + op + "(Tensor other, *, Number alpha) (Triggered "
        "internally at  ./torch/csrc/utils/python_arg_parser.cpp:1420.)", py::handle(PyExc_UserWarning));
    other = second;
    return alpha;
  };
  cls.def("add_", [operand, deprecated_alpha](py::object self, py::object other, const py::object& second,
                                              double alpha) {
        if (auto a = deprecated_alpha("add_", other, second)) alpha = *a;
        Tensor& t = self.cast<Tensor&>();
        Tensor o = operand(t, other);
        py::gil_scoped_release gil;
        t.add_(o, alpha);
        return self;
      }, py::arg("other"), py::arg("_other") = py::none(), py::kw_only(), py::arg("alpha") = 1.0)
      .def("sub_", [operand, deprecated_alpha](py::object self, py::object other, const py::object& second,
                                               double alpha) {
        if (auto a = deprecated_alpha("sub_", other, second)) alpha = *a;
        Tensor& t = self.cast<Tensor&>();
        Tensor o = operand(t, other);
        py::gil_scoped_release gil;
        sub_(t, o, alpha);
        return self;
      }, py::arg("other"), py::arg("_other") = py::none(), py::kw_only(), py::arg("alpha") = 1.0)
      .def("mul_", [operand](py::object self, const py::object& other) {
        Tensor& t = self.cast<Tensor&>();
        Tensor o = operand(t, other);
        py::gil_scoped_release gil;
        t.mul_(o);
        return self;
      }, py::arg("other"))
      // The quotient is computed, then written in (one version bump).
      .def("div_", [operand](py::object self, const py::object& other) {
        Tensor& t = self.cast<Tensor&>();
        Tensor o = operand(t, other);
        py::gil_scoped_release gil;
        div_(t, o);
        return self;
      }, py::arg("other"));

  // ---- comparisons and logical ops: bool tensors ----
  // A Python number on the other side is wrapped (operand above) and the engine promotes it with the tensor as
  // PyTorch does: the tensor's dtype when it is floating (so t == 0.1 compares in float32), else int64 for an
  // int, float32 (PyTorch's default dtype) for a float.
  // Anything but a tensor or a number gives NotImplemented, so `t == None` is False, as in PyTorch.
  auto bind_compare = [&](const char* dunder, const char* method, Tensor (*op)(const Tensor&, const Tensor&)) {
    auto fn = binary_operator(op);
    cls.def(dunder, fn, py::is_operator());
    cls.def(method, fn, py::arg("other"));
  };
  bind_compare("__eq__", "eq", &eq);
  bind_compare("__ne__", "ne", &ne);
  bind_compare("__lt__", "lt", &lt);
  bind_compare("__le__", "le", &le);
  bind_compare("__gt__", "gt", &gt);
  bind_compare("__ge__", "ge", &ge);
  // Defining __eq__ would make the class unhashable: tensors hash by identity, as PyTorch's.
  cls.def("__hash__", [](const py::object& self) { return reinterpret_cast<intptr_t>(self.ptr()); });
  // max over all elements (differentiable), or over one dim: (values, indices).
  cls.def("_max", [](const Tensor& t) { return max(t); }, release())
      .def("_max_dim", [](const Tensor& t, int64_t dim, bool keepdim) {
        MaxResult r = max(t, dim, keepdim);
        return std::make_pair(r.values, r.indices);
      }, release());
  // the indices of 1.13's order kernels (engine/ops/order.cpp), for sort, topk, kthvalue and mode
  cls.def("_sort_indices", &sort_indices, py::arg("dim"), py::arg("descending"), py::arg("stable"), release())
      .def("_topk_indices", &topk_indices, py::arg("k"), py::arg("dim"), py::arg("largest"), py::arg("sorted"),
           release())
      .def("_kthvalue_indices", &kthvalue_indices, py::arg("k"), py::arg("dim"), release())
      .def("_mode_indices", &mode_indices, py::arg("dim"), release());
  cls.def("logical_not", [](const Tensor& t) { return logical_not(t); }, release())
      .def("logical_and", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); }, release())
      .def("logical_or", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); }, release())
      .def("logical_xor", [](const Tensor& a, const Tensor& b) { return logical_xor(a, b); }, release());

  // ---- factories (CPU) ----
  m.def("_from_flat", &from_flat);
  m.def("_from_numpy", &from_numpy);
  m.def("_from_bytes", &from_bytes, py::arg("buffer"), py::arg("dtype"));
  m.def("zeros", [](const Shape& s, DType d) { return zeros(s, d); }, release());
  m.def("ones", [](const Shape& s, DType d) { return ones(s, d); }, release());
  m.def("full", [](const Shape& s, double v, DType d) { return full(s, v, d); }, release());
  m.def("empty", [](const Shape& s, DType d) { return empty(s, d); }, release());
  m.def("arange", [](int64_t n, DType d) { return arange(n, d); }, release());
  m.def("_arange_floating", [](double start, double step, int64_t n, DType d, int64_t threads) {
    return arange(start, step, n, d, threads);
  }, release());
  m.def("cat", [](const std::vector<Tensor>& ts, int64_t dim) { return cat(ts, dim); }, release());
  m.def("stack", [](const std::vector<Tensor>& ts, int64_t dim) { return stack(ts, dim); }, release());
  m.def("unsqueeze", [](const Tensor& x, int64_t dim) { return unsqueeze(x, dim); }, release());
  m.def("select", [](const Tensor& x, int64_t dim, int64_t index) { return select(x, dim, index); }, release());
  m.def("alias", [](const Tensor& x) { return alias(x); }, release());
  m.def("diagonal", [](const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
    return diagonal(x, offset, dim1, dim2);
  }, release());
  m.def("unfold", [](const Tensor& x, int64_t dim, int64_t size, int64_t step) { return unfold(x, dim, size, step); },
        release());
  m.def("as_strided", [](const Tensor& x, const Shape& size, const Shape& stride, std::optional<int64_t> offset) {
    return tinyddp::as_strided(x, size, stride, offset);
  }, release());
  m.def("slice", [](const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
    return slice(x, dim, start, end, step);
  }, release());
  // Advanced indexing (engine/ops/advanced_index.cpp): one entry per leading dim, None for a dim taken whole.
  m.def("index", [](const Tensor& x, const py::handle& indices) {
    const std::vector<Tensor> list = tensors_from_py(indices);
    py::gil_scoped_release gil;
    return index(x, list);
  });
  m.def("index_put", [](const Tensor& x, const py::handle& indices, const Tensor& values, bool accumulate) {
    const std::vector<Tensor> list = tensors_from_py(indices);
    py::gil_scoped_release gil;
    return index_put(x, list, values, accumulate);
  });
  m.def("index_put_", [](py::object self, const py::handle& indices, const Tensor& values, bool accumulate) {
    Tensor& t = self.cast<Tensor&>();
    const std::vector<Tensor> list = tensors_from_py(indices);
    {
      py::gil_scoped_release gil;
      index_put_(t, list, values, accumulate);
    }
    return self;
  });
  m.def("_fill_", [](py::object self, const Tensor& value) {   // fill_ with a one-element tensor (FillBackward3)
    Tensor& t = self.cast<Tensor&>();
    {
      py::gil_scoped_release gil;
      fill_(t, value);
    }
    return self;
  });
  m.def("bmm", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, release());   // BmmBackward0
  m.def("permute", [](const Tensor& x, const std::vector<int64_t>& dims) { return permute(x, dims); }, release());
  m.def("split", [](const Tensor& x, int64_t size, int64_t dim) { return split(x, size, dim); }, release());
  m.def("split_with_sizes", [](const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
    return split_with_sizes(x, sizes, dim);
  }, release());
  m.def("unbind", [](const Tensor& x, int64_t dim) { return unbind(x, dim); }, release());
  m.def("squeeze", [](const Tensor& x, std::optional<int64_t> dim) { return squeeze(x, dim); }, release());
  m.def("where", [](const Tensor& c, const Tensor& a, const Tensor& b) { return where(c, a, b); }, release());
  m.def("expand", [](const Tensor& x, const Shape& s) { return expand(x, s); }, release());
  m.def("_one_hot", [](const Tensor& i, int64_t n) { return one_hot(i, n, DType::f32); }, release());
}

}  // namespace tinyddp::python
