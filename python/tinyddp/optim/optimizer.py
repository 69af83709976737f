"""torch.optim.Optimizer: PyTorch 1.13's parameter groups, per-parameter state and state_dict, in Python as
PyTorch keeps them (torch/optim/optimizer.py); the update of each subclass runs in C++ (models/optim, bound as
tinyddp._C._optim), one call per parameter group with the group's values as they are at that step.

  param_groups   list of dicts: 'params' (a list of tensors) plus every key of `defaults` the group did not set
  state          {parameter: {name: value}}, created lazily by the first step that updates the parameter
  state_dict()   {'state': {index: {...}}, 'param_groups': [{..., 'params': [index, ...]}]}; indices number the
                 parameters of all groups in order, and the state's tensors are the optimizer's own (not copies)
"""
import copy
import functools
import itertools
import warnings
from collections import defaultdict

from tinyddp import _C
from tinyddp._tensor import Tensor, tensor
from tinyddp.autograd.grad_mode import enable_grad

# torch.typename's spelling of a tensor, for the messages that name a type
_TENSOR_TYPENAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "int64": "torch.LongTensor",
                     "bool": "torch.BoolTensor"}


def _typename(obj):
    if isinstance(obj, Tensor):
        return _TENSOR_TYPENAMES[repr(obj.dtype)[len("torch."):]]
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else module + "." + name


class _RequiredParameter:
    """The default of a hyperparameter every group must set (SGD's lr)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _tensor_steps(state, keys):
    """1.13's __setstate__ for a state saved when steps were numbers: each parameter's `keys` ('step', and
    whatever else the optimizer counts) become float32 0-dim tensors."""
    states = list(state.values())
    for key in keys:
        if states and not isinstance(states[0][key], Tensor):
            for s in states:
                s[key] = tensor(float(s[key]))


def _counts_steps(step):
    """Wraps a subclass's step so that each call adds one to the instance's _step_count, once a learning-rate
    scheduler has set it: 1.13's schedulers read it to warn when their step() comes first (lr_scheduler.py).
    Only the class's own step counts, so a subclass's step calling super().step() counts once, as in 1.13."""
    @functools.wraps(step)
    def counted_step(self, *args, **kwargs):
        if hasattr(self, "_step_count") and type(self).step is counted_step:
            self._step_count += 1
        return step(self, *args, **kwargs)
    counted_step._with_counter = True
    return counted_step


def _copy_with_tensors(obj):
    """copy.deepcopy that copies tinyddp tensors too (clones, without history): the engine's Tensor cannot be
    pickled, so each tensor reached is given to deepcopy's memo as its own copy first."""
    memo = {}

    def visit(x):
        if isinstance(x, Tensor):
            if id(x) not in memo:
                memo[id(x)] = x.detach().clone()
        elif isinstance(x, dict):
            for k, v in x.items():
                visit(k)
                visit(v)
        elif isinstance(x, (list, tuple, set, frozenset)):
            for v in x:
                visit(v)
    visit(obj)
    return copy.deepcopy(obj, memo)


class Optimizer:
    """The base of tinyddp's optimizers, as 1.13's: `params` is an iterable of tensors or of dicts (parameter
    groups), `defaults` the values of the hyperparameters a group does not set."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                            + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__ and not getattr(cls.__dict__["step"], "_with_counter", False):
            cls.step = _counts_steps(cls.__dict__["step"])

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    # (key, default) of the group options a pickled optimizer from before they existed lacks; __setstate__ fills
    # them into every group, as 1.13's optimizers each do in theirs.
    _group_defaults = ()
    # The per-parameter state an older pickle may hold as numbers, made 0-dim tensors by __setstate__ (1.13's
    # optimizers whose 'step' is a tensor do so in theirs).
    _tensor_state_keys = ()

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, default in self._group_defaults:
                group.setdefault(key, default)
        _tensor_steps(self.state, self._tensor_state_keys)

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
        return text + ")"

    def add_param_group(self, param_group):
        """Adds a group (a dict with 'params' and any hyperparameters) with 1.13's checks and texts; the
        hyperparameters it leaves out take the optimizer's defaults."""
        assert isinstance(param_group, dict), "param group must be a dict"
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter " + name)
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            # A duplicated parameter is then updated once per occurrence, as in 1.13.
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        taken = {id(p) for group in self.param_groups for p in group["params"]}
        if not taken.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def state_dict(self):
        index = {}   # id(parameter) -> its index, numbering the groups' parameters in order (a repeat keeps its first)
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(group["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Takes a copy of `state_dict`'s groups (keeping this optimizer's parameters) and state; the state's
        tensors are cast to their parameter's floating dtype, all but Adam's 'step'."""
        state_dict = _copy_with_tensors(state_dict)
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        by_index = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved_groups),
                            itertools.chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key != "step":
                    if param.is_floating_point():
                        value = value.to(param.dtype)
                    value = value.to(param.device)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in by_index:
                state[by_index[k]] = cast(by_index[k], v)
            else:
                state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
        self.__setstate__({"state": state, "param_groups": saved_groups})

    def zero_grad(self, set_to_none=False):
        _C._nn.zero_grad([p for group in self.param_groups for p in group["params"]], set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()
