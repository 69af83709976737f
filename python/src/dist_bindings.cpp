// dist/ for Python: the default process group (per thread), collectives, multiprocessing.spawn's rank
// threads (dist::ThreadWorld), DistributedDataParallel with its warnings routed to Python's `warnings`, and
// the join context for uneven inputs (dist/join.h).
#include <chrono>
#include <stdexcept>

#include "bindings.h"
#include "dist/collectives.h"
#include "dist/comm_hooks.h"
#include "dist/ddp.h"
#include "dist/debug_level.h"
#include "dist/mpi_process_group.h"
#include "dist/thread_process_group.h"

namespace tinyddp::python {

namespace {

using release = py::call_guard<py::gil_scoped_release>;

// The group spawn() gave this thread (a rank of a ThreadWorld), and the default group init_process_group set.
// Per thread: the ranks of the thread backend are threads of one process, each with its own default group.
thread_local std::shared_ptr<dist::ProcessGroup> spawn_group;
thread_local std::shared_ptr<dist::ProcessGroup> default_group;

dist::ProcessGroup& default_pg() {
  TINYDDP_CHECK(default_group != nullptr,
                "Default process group has not been initialized, please make sure to call init_process_group.");
  return *default_group;
}

using PG = std::shared_ptr<dist::ProcessGroup>;

// The group a collective runs on: a subgroup from new_group, or the default group when none is given.
dist::ProcessGroup& pg_of(const PG& pg) { return pg ? *pg : default_pg(); }

void init_process_group(const std::string& backend, int rank, int world_size, double timeout_s) {
  TINYDDP_CHECK(default_group == nullptr, "trying to initialize the default process group twice!");
  std::shared_ptr<dist::ProcessGroup> pg;
  if (backend == "thread") {
    if (spawn_group) {
      pg = spawn_group;
    } else {
      TINYDDP_CHECK(world_size <= 1 && rank <= 0, "init_process_group(backend=\"thread\", world_size=", world_size,
                    "): outside tinyddp.multiprocessing.spawn the thread backend has one rank. Start the ranks as "
                    "threads with tinyddp.multiprocessing.spawn(fn, nprocs=", world_size, "), or use backend=\"mpi\" "
                    "under mpirun.");
      pg = std::make_shared<dist::ThreadWorld>(1)->group(0);
    }
  } else if (backend == "mpi") {
    TINYDDP_CHECK(dist::mpi_available(), "Distributed package doesn't have MPI built in. MPI is only included if you "
                                         "build PyTorch from source on a host that has MPI installed.");
    pg = dist::mpi_world();
  } else {
    TINYDDP_CHECK(false, "Invalid backend: '", backend, "'. tinyddp's Python front end has the backends \"thread\" "
                         "(ranks as threads, inside tinyddp.multiprocessing.spawn) and \"mpi\" (under mpirun).");
  }
  TINYDDP_CHECK(world_size < 0 || world_size == pg->size(), "init_process_group: world_size=", world_size,
                " but the ", backend, " backend has ", pg->size(), " ranks here.");
  TINYDDP_CHECK(rank < 0 || rank == pg->rank(), "init_process_group: rank=", rank, " but this ", backend,
                " rank is ", pg->rank(), ".");
  if (timeout_s > 0)
    pg->set_timeout(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000.0)));
  default_group = std::move(pg);
}

dist::ReduceOp reduce_op(const std::string& op) {
  for (dist::ReduceOp o : {dist::ReduceOp::sum, dist::ReduceOp::product, dist::ReduceOp::min, dist::ReduceOp::max})
    if (op == dist::reduce_op_name(o)) return o;
  // gloo's text: 1.13's gloo has no AVG (NCCL does); tinyddp's backends stand in for gloo
  TINYDDP_CHECK(op != "avg", "Cannot use ReduceOp.AVG with Gloo");
  TINYDDP_CHECK(false, "all_reduce: ReduceOp.", op, " is not supported by tinyddp (SUM, PRODUCT, MIN and MAX are).");
  return dist::ReduceOp::sum;
}

// Runs fn(rank) on `nprocs` rank threads of one ThreadWorld (multiprocessing.spawn). A rank whose fn raises
// aborts the world, so ranks blocked in collectives raise too instead of waiting; returns, per rank, its
// error text ("" when it finished).
std::vector<std::string> run_threads(int nprocs, const py::function& fn, double timeout_s) {
  PyRef ref(fn);
  std::vector<std::exception_ptr> errors;
  {
    py::gil_scoped_release gil;
    const auto timeout = timeout_s > 0 ? std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000.0))
                                       : dist::kDefaultTimeout;
    errors = dist::ThreadWorld::run(
        nprocs,
        [&](dist::ProcessGroup& pg) {
          // Non-owning: the group lives as long as this rank's run (objects built on it must not outlive spawn).
          spawn_group = std::shared_ptr<dist::ProcessGroup>(std::shared_ptr<void>(), &pg);
          route_warnings_to_python();   // this thread's C++ warnings (a checkpoint's) reach `warnings` too
          std::string failure;
          {
            py::gil_scoped_acquire acquire;
            try {
              ref.get()(pg.rank());
            } catch (py::error_already_set& e) {
              failure = e.what();   // the Python side keeps the traceback; here only the text, for the abort
            }
          }
          spawn_group.reset();
          default_group.reset();
          if (!failure.empty()) throw Error(failure);
        },
        timeout);
  }
  std::vector<std::string> out;
  for (const auto& e : errors) {
    std::string text;
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        text = ex.what();
      }
    }
    out.push_back(text);
  }
  return out;
}

// The reducer's Work for a bucket reduced by a Python comm hook: its tinyddp.futures.Future. When the Future
// completes, its value (the reduced bucket, as a tensor) is copied into the bucket, where the reducer reads the
// gradients from (1.13's contract: the hook returns the result, it need not write it in place).
class PyFutureWork : public dist::Work {
 public:
  PyFutureWork(PyRef future, Tensor bucket) : future_(std::move(future)), bucket_(std::move(bucket)) {}

  void wait() override {
    Tensor result;
    {
      py::gil_scoped_acquire gil;
      py::object value;
      try {
        value = future_.get().attr("wait")();
      } catch (py::error_already_set& e) {
        throw Error(e.what());   // "ValueError: ...\n\nAt:\n  <traceback>", as 1.13 reports a hook's exception
      }
      // A Future straight from Work.get_future() holds a list of tensors; 1.13 asserts on that, in this text.
      if (!py::isinstance<Tensor>(value))
        throw Error("result.isPyObject() INTERNAL ASSERT FAILED at \"./torch/csrc/distributed/c10d/"
                    "python_comm_hook.cpp\":43, please report a bug to PyTorch. expected the hook result is a PyObject");
      result = value.cast<Tensor>();
    }
    TINYDDP_CHECK(result.numel() == bucket_.numel() && result.dtype() == bucket_.dtype(),
                  "DDP communication hook: the Future's value must be the reduced bucket, a ",
                  dtype_name(bucket_.dtype()), " tensor of ", bucket_.numel(), " elements, but it has ", result.numel(),
                  " elements of ", dtype_name(result.dtype()), ". Return fut.then(lambda f: f.value()[0]) for an "
                  "allreduce's Future.");
    if (result.is_same(bucket_)) return;
    NoGradGuard no_grad;
    Tensor flat = bucket_;
    flat.copy_(result.reshape({bucket_.numel()}));
  }

  bool is_completed() override {
    py::gil_scoped_acquire gil;
    return future_.get().attr("done")().cast<bool>();
  }

 private:
  PyRef future_;
  Tensor bucket_;
};

// DistributedDataParallel for a Python module: tinyddp/nn/parallel/distributed.py hands it the module's
// named parameters and, per forward, a callable that runs the module and returns its flattened tensors.
class PyDDP {
 public:
  // pg: the group to reduce over (a new_group's); null: the default group.
  PyDDP(const dist::NamedParameters& params, const dist::DDPOptions& options, const dist::NamedBuffers& buffers,
        const PG& group) {
    auto pg = group ? group : default_group;
    TINYDDP_CHECK(pg != nullptr,
                  "Default process group has not been initialized, please make sure to call init_process_group.");
    py::gil_scoped_release gil;
    ddp_ = std::make_unique<dist::DistributedDataParallel>(params, pg, options, buffers);
    // Each reducer warning where 1.13 puts it (dist::WarningOrigin): a UserWarning, or a line on stderr
    // (prepare_for_backward's TORCH_WARN, and tinyddp's own diagnoses). Those of the construction (static_graph
    // with find_unused_parameters) come from DDP's record, the later ones as they come.
    auto route = [rank = pg->rank()](const std::string& message, dist::WarningOrigin origin) {
      py::gil_scoped_acquire acquire;
      if (origin == dist::WarningOrigin::python) {
        py::module_::import("warnings").attr("warn")(message, py::handle(PyExc_UserWarning));
        return;
      }
      // c10's format for the one 1.13 prints; one write per line, so that rank threads do not interleave.
      const std::string line = origin == dist::WarningOrigin::c10_log
                                   ? "[W reducer.cpp] Warning: " + message + "\n"
                                   : "[W reducer rank " + std::to_string(rank) + "] " + message + "\n";
      py::module_::import("sys").attr("stderr").attr("write")(line);
    };
    for (size_t i = 0; i < ddp_->warnings().size(); ++i) route(ddp_->warnings()[i], ddp_->warning_origins()[i]);
    ddp_->reducer().set_warning_handler(route);
  }

  std::vector<Tensor> forward(const py::function& module_forward) {
    PyRef ref(module_forward);
    py::gil_scoped_release gil;
    return ddp_->forward([&] {
      py::gil_scoped_acquire acquire;
      return ref.get()().cast<std::vector<Tensor>>();
    });
  }

  void enter_no_sync() { guards_.push_back(std::make_unique<dist::DistributedDataParallel::NoSyncGuard>(*ddp_)); }
  void exit_no_sync() {
    TINYDDP_CHECK(!guards_.empty(), "no_sync: exit without enter");
    guards_.pop_back();
  }
  void check_before_step() { ddp_->check_before_step(); }
  dist::DistributedDataParallel& ddp() { return *ddp_; }

  // run(index, buffer, parameter_indices, is_last) is DistributedDataParallel.register_comm_hook's closure
  // around the user's hook: it returns the hook's Future, or a str with the error for what the hook returned.
  void register_comm_hook(const py::function& run) {
    ddp_->register_comm_hook([fn = PyRef(run)](dist::ProcessGroup&, dist::GradBucket& bucket) -> std::shared_ptr<dist::Work> {
      py::gil_scoped_acquire gil;
      py::object future;
      try {
        future = fn.get()(bucket.index, bucket.buffer, bucket.parameter_indices, bucket.is_last);
      } catch (py::error_already_set& e) {
        throw Error(e.what());
      }
      if (py::isinstance<py::str>(future)) throw Error(future.cast<std::string>());
      return std::make_shared<PyFutureWork>(PyRef(future), bucket.buffer);
    });
  }

 private:
  std::unique_ptr<dist::DistributedDataParallel> ddp_;
  std::vector<std::unique_ptr<dist::DistributedDataParallel::NoSyncGuard>> guards_;   // nested no_sync() scopes
};

// A Python JoinHook (what a Python Joinable's join_hook(**kwargs) returned) run by dist::Join::finish, which
// runs without the GIL: each call takes it.
class PyJoinHook : public dist::JoinHook {
 public:
  explicit PyJoinHook(py::object hook) : hook_(std::move(hook)) {}
  ~PyJoinHook() override {
    py::gil_scoped_acquire gil;
    hook_ = py::object();
  }
  void main_hook() override {
    py::gil_scoped_acquire gil;
    hook_.attr("main_hook")();
  }
  void post_hook(bool is_last_joiner) override {
    py::gil_scoped_acquire gil;
    hook_.attr("post_hook")(is_last_joiner);
  }

 private:
  py::object hook_;
};

// A Python torch.distributed.algorithms.join.Joinable as dist::Join sees it, made by the Python Join for one
// context: the hook the joinable gave for that context's keyword arguments, and its group (the default group
// when None). Its JoinConfig is the one notify_join_context reads for the Python joinable.
class PyJoinable : public dist::Joinable {
 public:
  PyJoinable(py::object hook, const PG& pg) : hook_(std::move(hook)), pg_(pg ? pg : default_group) {
    TINYDDP_CHECK(pg_ != nullptr,
                  "Default process group has not been initialized, please make sure to call init_process_group.");
  }
  ~PyJoinable() override {
    py::gil_scoped_acquire gil;
    hook_ = py::object();
  }
  std::unique_ptr<dist::JoinHook> join_hook(const dist::JoinOptions&) override {
    py::gil_scoped_acquire gil;   // copies a Python reference
    return std::make_unique<PyJoinHook>(hook_);
  }
  Device join_device() const override { return Device::cpu(); }
  std::shared_ptr<dist::ProcessGroup> join_process_group() const override { return pg_; }

 private:
  py::object hook_;
  PG pg_;
};

// torch.distributed.algorithms.join.Join over DDP instances and Python joinables: built when the Python Join is
// (as 1.13 sets the joinables' configs in Join.__init__), finished at __exit__ without an exception.
class PyJoin {
 public:
  PyJoin(const py::list& joinables, const dist::JoinOptions& options) {
    std::vector<dist::Joinable*> js;
    for (const py::handle& j : joinables) {
      if (py::isinstance<PyDDP>(j))
        js.push_back(&j.cast<PyDDP&>().ddp());
      else
        js.push_back(&j.cast<PyJoinable&>());
    }
    py::gil_scoped_release gil;
    join_ = std::make_unique<dist::Join>(std::move(js), options);
  }

  void finish() {
    TINYDDP_CHECK(join_ != nullptr, "Join: the context was already exited; a Join is used for one `with` block.");
    py::gil_scoped_release gil;
    join_->finish();
  }

  // __exit__ with an exception: 1.13 does nothing and lets it propagate. dist::Join tells that case from a
  // forgotten finish() by unwinding (std::uncaught_exceptions), which a Python exception does not do in C++;
  // so the Join is dropped while a C++ exception unwinds, and stays silent as the C++ API's users see it.
  void abandon() {
    struct Drop {
      std::unique_ptr<dist::Join>& join;
      ~Drop() { join.reset(); }
    };
    try {
      Drop drop{join_};
      throw std::runtime_error("the with block raised");
    } catch (const std::runtime_error&) {
    }
  }

 private:
  std::unique_ptr<dist::Join> join_;
};

}  // namespace

void bind_dist(py::module_& m) {
  py::module_ d = m.def_submodule("_dist", "dist/ for tinyddp.distributed");
  py::class_<dist::Work, std::shared_ptr<dist::Work>>(d, "Work")
      .def("wait", [](dist::Work& w) { w.wait(); return true; }, release())
      .def("is_completed", &dist::Work::is_completed, release())
      .def("source_rank", &dist::Work::source_rank);

  d.def("init_process_group", &init_process_group, py::arg("backend"), py::arg("rank") = -1,
        py::arg("world_size") = -1, py::arg("timeout_s") = 0.0);
  d.def("destroy_process_group", [] { default_group.reset(); });
  d.def("is_initialized", [] { return default_group != nullptr; });
  d.def("get_rank", [] { return default_pg().rank(); });
  d.def("get_world_size", [] { return default_pg().size(); });
  d.def("get_backend", [] { return default_pg().backend(); });
  py::class_<dist::ProcessGroup, PG>(d, "ProcessGroup")
      .def("rank", &dist::ProcessGroup::rank)
      .def("size", &dist::ProcessGroup::size);
  // A subgroup of the default group's `ranks`; None on a rank not in it (every rank calls it).
  d.def("new_group", [](const std::vector<int>& ranks) { return default_pg().subgroup(ranks); }, release());
  const auto group = py::arg("pg") = PG();
  d.def("barrier", [](const PG& pg) { return pg_of(pg).barrier(); }, group, release());
  d.def("barrier_wait", [](const PG& pg) { pg_of(pg).barrier()->wait(); }, group, release());
  d.def("all_reduce", [](const Tensor& t, const std::string& op, const PG& pg) {
          return pg_of(pg).allreduce({t}, reduce_op(op));
        }, py::arg("tensor"), py::arg("op"), group, release());
  d.def("broadcast", [](const Tensor& t, int src, const PG& pg) { return pg_of(pg).broadcast({t}, src); },
        py::arg("tensor"), py::arg("src"), group, release());
  d.def("all_gather", [](std::vector<Tensor> outputs, const Tensor& input, const PG& pg) {
          return pg_of(pg).allgather(std::move(outputs), input);
        }, py::arg("outputs"), py::arg("input"), group, release());
  d.def("reduce", [](const Tensor& t, int dst, const std::string& op, const PG& pg) {
          return dist::reduce(pg_of(pg), t, dst, reduce_op(op));
        }, py::arg("tensor"), py::arg("dst"), py::arg("op"), group, release());
  d.def("gather", [](const Tensor& input, std::vector<Tensor> outputs, int dst, const PG& pg) {
          return dist::gather(pg_of(pg), input, std::move(outputs), dst);
        }, py::arg("input"), py::arg("outputs"), py::arg("dst"), group, release());
  d.def("scatter", [](const Tensor& output, std::vector<Tensor> inputs, int src, const PG& pg) {
          return dist::scatter(pg_of(pg), output, std::move(inputs), src);
        }, py::arg("output"), py::arg("inputs"), py::arg("src"), group, release());
  d.def("reduce_scatter", [](const Tensor& output, std::vector<Tensor> inputs, const std::string& op, const PG& pg) {
          return dist::reduce_scatter(pg_of(pg), output, std::move(inputs), reduce_op(op));
        }, py::arg("output"), py::arg("inputs"), py::arg("op"), group, release());
  d.def("all_to_all", [](std::vector<Tensor> outputs, std::vector<Tensor> inputs, const PG& pg) {
          return dist::alltoall(pg_of(pg), std::move(outputs), std::move(inputs));
        }, py::arg("outputs"), py::arg("inputs"), group, release());
  d.def("send", [](const Tensor& t, int dst, int tag, const PG& pg) { return pg_of(pg).send(t, dst, tag); },
        py::arg("tensor"), py::arg("dst"), py::arg("tag"), group, release());
  d.def("recv", [](const Tensor& t, int src, int tag, const PG& pg) { return pg_of(pg).recv(t, src, tag); },
        py::arg("tensor"), py::arg("src"), py::arg("tag"), group, release());
  // Every rank's bytes, in rank order (all_gather_object and broadcast_object_list send pickles through it).
  d.def("all_gather_bytes", [](const py::bytes& mine, const PG& pg) {
    std::string bytes = mine;
    std::vector<std::string> all;
    {
      py::gil_scoped_release gil;
      all = dist::allgather_strings(pg_of(pg), bytes);
    }
    py::list out;
    for (const std::string& b : all) out.append(py::bytes(b));
    return out;
  }, py::arg("mine"), group);
  d.def("run_threads", &run_threads);
  d.def("set_detail_fingerprints", [](bool on) { default_pg().set_detail_fingerprints(on); });
  d.def("debug_level_from_env", [] { return std::string(dist::debug_level_name(dist::debug_level_from_env())); });
  // fp16_compress_hook's cast: rounds a float32 tensor's values to the nearest fp16 (dist/comm_hooks.h).
  d.def("round_to_fp16_", [](Tensor& t) {
    TINYDDP_CHECK(t.dtype() == DType::f32 && t.device().is_cpu() && t.is_contiguous(),
                  "round_to_fp16_: expects a contiguous float32 CPU tensor, got ", dtype_name(t.dtype()), " on ",
                  t.device().str());
    float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist::round_to_fp16(p[i]);
  }, release());

  py::class_<dist::DDPOptions>(d, "DDPOptions")
      .def(py::init([](double bucket_cap_mb, bool find_unused_parameters, bool static_graph,
                       bool gradient_as_bucket_view, bool broadcast_buffers, const std::string& debug_level,
                       bool copy) {
             dist::DDPOptions o;
             // The level tinyddp.distributed read from TORCH_DISTRIBUTED_DEBUG when imported (as 1.13 reads it)
             for (dist::DebugLevel l : {dist::DebugLevel::off, dist::DebugLevel::info, dist::DebugLevel::detail})
               if (debug_level == dist::debug_level_name(l)) o.debug_level = l;
             TINYDDP_CHECK(o.debug_level.has_value(), "DDPOptions: debug_level must be OFF, INFO or DETAIL, not ",
                           debug_level);
             o.bucket_cap_mb = bucket_cap_mb;
             o.broadcast_buffers = broadcast_buffers;
             o.find_unused_parameters = find_unused_parameters;
             o.static_graph = static_graph;
             o.gradient_as_bucket_view = gradient_as_bucket_view;
             o.print_warnings = false;   // they go to Python's warnings instead
             // a copy (copy.deepcopy, unpickling) builds its reducer without a collective, as 1.13's __setstate__
             o.verify_parameters = o.broadcast_parameters = !copy;
             return o;
           }),
           py::arg("bucket_cap_mb"), py::arg("find_unused_parameters"), py::arg("static_graph"),
           py::arg("gradient_as_bucket_view"), py::arg("broadcast_buffers"), py::arg("debug_level"),
           py::arg("copy") = false);
  py::class_<PyDDP>(d, "DistributedDataParallel")
      .def(py::init<const dist::NamedParameters&, const dist::DDPOptions&, const dist::NamedBuffers&, const PG&>(),
           py::arg("params"), py::arg("options"), py::arg("buffers"), py::arg("pg") = PG())
      .def("forward", &PyDDP::forward)
      .def("enter_no_sync", &PyDDP::enter_no_sync)
      .def("exit_no_sync", &PyDDP::exit_no_sync)
      .def("check_before_step", &PyDDP::check_before_step, release())
      .def("set_static_graph", [](PyDDP& p) { p.ddp().set_static_graph(); })
      .def_property_readonly("static_graph", [](PyDDP& p) { return p.ddp().static_graph(); })
      .def("register_comm_hook", &PyDDP::register_comm_hook)
      .def("bucket_indices", [](PyDDP& p) { return p.ddp().reducer().bucket_indices(); })
      .def_property_readonly("has_rebuilt_buckets", [](PyDDP& p) { return p.ddp().reducer().has_rebuilt_buckets(); });

  py::class_<PyJoinable>(d, "Joinable")
      .def(py::init<py::object, const PG&>(), py::arg("hook"), py::arg("pg") = PG())
      // Join.notify_join_context for a Python joinable: None, or the Work of its allreduce of ones.
      .def("notify_join_context", [](PyJoinable& j) -> std::shared_ptr<dist::Work> {
        std::optional<dist::JoinNotice> notice = dist::Join::notify_join_context(j);
        return notice ? notice->work : nullptr;
      }, release());
  py::class_<PyJoin>(d, "Join")
      .def(py::init([](const py::list& joinables, bool enable, bool throw_on_early_termination,
                       bool divide_by_initial_world_size) {
             return std::make_unique<PyJoin>(
                 joinables, dist::JoinOptions{.enable = enable,
                                              .throw_on_early_termination = throw_on_early_termination,
                                              .divide_by_initial_world_size = divide_by_initial_world_size});
           }),
           py::arg("joinables"), py::arg("enable"), py::arg("throw_on_early_termination"),
           py::arg("divide_by_initial_world_size"))
      .def("finish", &PyJoin::finish)
      .def("abandon", &PyJoin::abandon);
}

}  // namespace tinyddp::python
