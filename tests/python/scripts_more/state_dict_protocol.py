# Checkpoint code that extends Module's state-dict protocol, as 1.13 runs it: a _load_from_state_dict override
# that renames an old key, get_extra_state / set_extra_state, _register_state_dict_hook (dropping keys),
# _register_load_state_dict_pre_hook with and without the module, load post-hooks seeing the keys found so far,
# the order of missing and unexpected keys through nested modules, strict=False, size mismatches and non-tensor
# entries, BatchNorm's version-1 checkpoints, a 1-element tensor for a 0-dim buffer, and state_dict's positional
# arguments (deprecated, with a warning).
import io
from collections import OrderedDict

import tinyddp as torch
import tinyddp.nn as nn


class Renamed(nn.Linear):
    """Reads checkpoints that called the weight 'w'."""

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        if prefix + "w" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.steps = 0

    def get_extra_state(self):
        return {"steps": self.steps}

    def set_extra_state(self, state):
        self.steps = state["steps"]


torch.manual_seed(0)
model = nn.Sequential(OrderedDict(old=Renamed(2, 2), counter=Counter(), bn=nn.BatchNorm1d(2)))
sd = model.state_dict()
print(list(sd.keys()))
print(dict(sd._metadata))
old = OrderedDict((k.replace("old.weight", "old.w"), v.clone() + 1 if torch.is_tensor(v) and v.is_floating_point()
                   else v) for k, v in sd.items())
old["counter._extra_state"] = {"steps": 7}
print(model.load_state_dict(old), model.counter.steps, f"{model.old.weight.sum().item():.4f}")

seen = []
model.counter.register_load_state_dict_post_hook(lambda m, keys: seen.append(("counter", list(keys.missing_keys))))
model.register_load_state_dict_post_hook(lambda m, keys: seen.append(("root", list(keys.unexpected_keys))))
model.bn._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: seen.append(("pre", prefix)))
model.counter._register_load_state_dict_pre_hook(
    lambda m, sd, prefix, *rest: seen.append(("pre+m", type(m).__name__)), with_module=True)
partial = OrderedDict((k, v) for k, v in sd.items() if not k.startswith("counter.lin"))
partial["counter.lin.extra"] = torch.zeros(1)
partial["bn.extra.deep"] = torch.zeros(1)
partial["zzz"] = torch.zeros(1)
try:
    model.load_state_dict(partial)
except RuntimeError as e:
    print(e)
print(seen)
print(model.load_state_dict(partial, strict=False))

model._register_state_dict_hook(
    lambda m, d, prefix, meta: OrderedDict((k, v) for k, v in d.items() if "bn" not in k))
print(list(model.state_dict().keys()))

bad = OrderedDict(sd)
bad["old.bias"] = torch.zeros(3)
bad["bn.weight"] = [1.0, 2.0]
try:
    model.load_state_dict(bad)
except RuntimeError as e:
    print(e)

v1 = OrderedDict((k, v) for k, v in sd.items() if not k.endswith("num_batches_tracked"))
v1._metadata = OrderedDict(sd._metadata)
v1._metadata["bn"] = {"version": 1}
print(model.load_state_dict(v1), model.bn.num_batches_tracked)
v2 = OrderedDict(v1)
v2._metadata = OrderedDict(sd._metadata)
try:
    model.load_state_dict(v2)
except RuntimeError as e:
    print(e)

counting = nn.BatchNorm1d(2)
print(counting.load_state_dict({"weight": torch.ones(2), "bias": torch.zeros(2), "running_mean": torch.zeros(2),
                                "running_var": torch.ones(2), "num_batches_tracked": torch.tensor([5])}),
      counting.num_batches_tracked)

dest = OrderedDict()
model.counter.state_dict(dest, "c.")
print(list(dest.keys()))
buffer = io.BytesIO()
torch.save(model.counter.state_dict(), buffer)
buffer.seek(0)
restored = Counter()
print(restored.load_state_dict(torch.load(buffer)), restored.steps)
try:
    model.load_state_dict([("old.weight", torch.zeros(2, 2))])
except TypeError as e:
    print(e)
