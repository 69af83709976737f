"""Type promotion and integer arithmetic of PyTorch 1.13: result dtypes, values and errors.

Writes type_promotion.json next to this script:
  "setup":  Python code that makes the named operands (run with `torch` bound to torch, or to tinyddp);
  "cases":  [{"code", "out": {"dtype", "shape", "values"} | {"python": type name, "value"}
              | "error": {"type", "message"}}, ...]   `code` is an expression, or statements that set `out`;
  "grads":  [{"code", "leaves", "grad_fn", "out", "grads": {leaf: {"dtype", "values"}}}, ...]
  "torch_version".
Run: /usr/bin/python3 tests/golden/gen_type_promotion.py
"""
import itertools
import math
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json

# Operands: dim-ful and 0-dim tensors of each dtype; values chosen so that results are exact in float32 where the
# op allows (halves and quarters), and an int64 pair beyond 2^53 to show integer results are not rounded.
SETUP = """
f = torch.tensor([1.5, -2.0, 3.25])
d = torch.tensor([0.5, 2.0, -1.0], dtype=torch.float64)
i = torch.tensor([3, -4, 5])
b = torch.tensor([True, False, True])
f0 = torch.tensor(2.5)
d0 = torch.tensor(0.1, dtype=torch.float64)
i0 = torch.tensor(7)
b0 = torch.tensor(True)
big = torch.tensor([9007199254740993, -4611686018427387903])
f2 = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
i2 = torch.tensor([[1, 2, 3], [6, 5, 4]])
pred = torch.tensor([0, 2, 1, 1, 3])
y = torch.tensor([0, 1, 1, 1, 3])
"""

TENSORS = ["f", "d", "i", "b", "f0", "d0", "i0", "b0"]
NUMBERS = ["2", "-3", "2.5", "0.1", "True", "False"]

cases = []
for op in ["+", "-", "*", "/"]:
    for x, z in itertools.product(TENSORS, TENSORS + NUMBERS):
        cases.append(f"{x} {op} {z}")
    for x, z in itertools.product(NUMBERS, TENSORS):
        cases.append(f"{x} {op} {z}")
for x in TENSORS:
    cases.append(f"-{x}")
    for e in ["2", "3", "0", "1", "-1", "True", "2.0", "0.5", "-1.0"]:
        cases.append(f"{x} ** {e}")
for x, z in itertools.product(TENSORS, TENSORS):   # tensor exponents (PyTorch's pow.Tensor_Tensor)
    cases.append(f"{x} ** {z}")
for x, z in itertools.product(NUMBERS, TENSORS):   # number ** tensor (pow.Scalar)
    cases.append(f"{x} ** {z}")
cases += [
    "i ** torch.tensor([2, 0, 21])", "big ** torch.tensor([1, 1])", "torch.tensor([2, -3]) ** torch.tensor([62, 39])",
    "i ** torch.tensor([1, -1, 2])", "i2 ** torch.tensor([0, 1, 2])", "torch.tensor([0.0, 2.0, -2.0]) ** i",
    "abs(i)", "abs(i2)", "abs(big)", "abs(b)", "abs(i0)", "i.abs()",
    # the float functions compute integers and bools in float32
    "i.exp()", "i.log()", "i.sqrt()", "i.tanh()", "i.sigmoid()", "b.exp()", "b.sqrt()", "torch.exp(i0)", "i.relu()",
    "torch.relu(i2 - 3)", "b.relu()",
    # integers stay exact
    "big + 1", "big * 2", "i + 2 ** 70", "f * 2 ** 63", "i * (2 ** 63 - 1)", "i - 2 ** 63", "big - big", "-big", "big + i0", "big ** 1", "i ** 20", "big.sum()",
    # the brief's accuracy code
    "(pred == y).sum()", "(pred == y).sum() / 5", "100. * (pred == y).sum() / 5",
    "(pred == y).sum() + (pred == y).sum()",
    "y + 1", "y * 2", "int(y.max()) + 1", "(pred == y) * f2.reshape(-1)[:5]", "(pred == y).float().mean()",
    "b * f", "f * b", "b * d0", "i2 * f2", "f2 / i2", "i2 / i2", "i2 + i", "f2 * d0", "f2 + d", "i2 + b0", "i2 * 0.5",
    "1 / i", "2.0 / b", "1 - i", "10 - i2",
    # comparisons share the promotion (a 0-dim float64 does not widen a float32 tensor)
    "f == d0", "f > d0", "i < 2.5", "i == 3", "b == 1", "b < 0.5", "i0 > f", "d0 == f0", "b == b0",
    # cat promotes its tensors
    "torch.cat([f, i])", "torch.cat([i, b])", "torch.cat([b, b])", "torch.cat([f, d])", "torch.cat([i, d, b])",
    "torch.cat([i2, f2], 1)",
    # reductions of integers and bools
    "i.sum()", "b.sum()", "i2.sum(0)", "i2.sum(1, keepdim=True)", "b.sum(0)", "i.max()", "b.max()", "i2.max()",
    "i.argmax()", "i2.argmax(1)", "i2.max(1)[0]", "i2.max(1)[1]", "i2.max(0, keepdim=True)[0]", "b.max(0)[0]",
    "b.argmax()", "i.mean()",
    # in place: promoted, then cast into self's dtype when allowed
    "out = i.clone(); out += 1",
    "out = i.clone(); out += (pred[:3] == y[:3]).sum()",
    "out = torch.tensor(0); out += (pred == y).sum(); out += (pred == y).sum()",
    "out = i.clone(); out -= 2",
    "out = i.clone(); out *= 3",
    "out = i.clone(); out *= i",
    "out = i.clone(); out += b",
    "out = i.clone(); out += 0.5",
    "out = i.clone(); out *= 1.5",
    "out = i.clone(); out += f",
    "out = i.clone(); out.div_(2)",
    "out = f.clone(); out += i",
    "out = f.clone(); out += d",
    "out = f.clone(); out *= d",
    "out = f.clone(); out.div_(i)",
    "out = f.clone(); out.add_(i, alpha=2)",
    "out = i.clone(); out.add_(i, alpha=2)",
    "out = i.clone(); out.add_(i, alpha=0.5)",
    "out = i.clone(); out.sub_(1)",
    "out = b.clone(); out += b",
    "out = b.clone(); out *= b0",
    "out = b.clone(); out += 1",
    "out = b.clone(); out -= b",
    "out = i.clone(); out -= True",
    "out = d.clone(); out += f0",
    "out = d.clone(); out *= 0.1",
    "out = i.clone(); out /= 2",
    "out = f.clone(); alias = out; out /= 4; out = alias",
    "out = f.clone(); out /= i",
    "out = d.clone(); out /= f0",
    "x = f.clone().requires_grad_(); out = x * 2; out /= 4; out = (out, out.grad_fn.name())[0]",
]


def record(value):
    if isinstance(value, torch.Tensor):
        values = value.tolist()
        return {"dtype": str(value.dtype).replace("torch.", ""), "shape": list(value.shape), "values": values}
    return {"python": type(value).__name__, "value": value}


def run(code, env):
    if "out =" in code:
        exec(code, env)
        return env["out"]
    return eval(code, env)


def fresh_env():
    env = {"torch": torch}
    exec(SETUP, env)
    return env


table = []
for code in cases:
    env = fresh_env()
    try:
        table.append({"code": code, "out": record(run(code, env))})
    except Exception as e:  # noqa: BLE001 - the golden is the error itself
        table.append({"code": code, "error": {"type": type(e).__name__, "message": str(e)}})

# Gradients of float ops with a promoted operand reach each leaf in its own dtype, through the node PyTorch
# names. `y` is the op under test; out = y.sum() is differentiated.
GRADS = [
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\n"
     "w = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)\ny = x * w", ["x", "w"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\n"
     "w = torch.tensor([0.1, 0.3, -0.7], dtype=torch.float64, requires_grad=True)\ny = x * w", ["x", "w"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\n"
     "w = torch.tensor([0.1, 0.3, -0.7], dtype=torch.float64, requires_grad=True)\ny = x + w", ["x", "w"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\n"
     "w = torch.tensor([0.1, 0.3, -0.7], dtype=torch.float64, requires_grad=True)\ny = w - x", ["x", "w"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\n"
     "w = torch.tensor([0.1, 0.3, -0.7], dtype=torch.float64, requires_grad=True)\ny = x / w", ["x", "w"]),
    ("x = torch.tensor(1.5, requires_grad=True)\n"
     "w = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)\ny = x / w", ["x", "w"]),
    ("x = torch.tensor([[1.5, -2.0], [0.25, 4.0]], requires_grad=True)\n"
     "w = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)\ny = w * x + x / w", ["x", "w"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\nmask = torch.tensor([True, False, True])\n"
     "y = mask * x", ["x"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\nk = torch.tensor([3, -1, 2])\ny = x / k", ["x"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\nk = torch.tensor([3, -1, 2])\ny = k - x", ["x"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], dtype=torch.float64, requires_grad=True)\ny = x * 0.1", ["x"]),
    ("x = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)\ny = x * 0.1 + 3", ["x"]),
    ("x = torch.tensor([1.5, -2.0], requires_grad=True)\n"
     "w = torch.tensor([0.1, 0.3], dtype=torch.float64, requires_grad=True)\ny = torch.cat([x, w])", ["x", "w"]),
    ("x = torch.tensor([1.5, -2.0], requires_grad=True)\nk = torch.tensor([4, 5])\ny = torch.cat([x, k]) * 2",
     ["x"]),
    ("x = torch.tensor([1.5, 2.0, 0.0, 0.0], requires_grad=True)\n"
     "w = torch.tensor([0.5, -1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)\ny = x ** w", ["x", "w"]),
    ("x = torch.tensor([1.5, -2.0, 0.0], requires_grad=True)\nk = torch.tensor([2, 3, 0])\ny = x ** k", ["x"]),
    ("x = torch.tensor([1.5, -2.0, 0.0], requires_grad=True)\ny = 2 ** x", ["x"]),
    ("x = torch.tensor([1.5, -2.0, 0.0], requires_grad=True)\ny = 0.5 ** x", ["x"]),
    ("x = torch.tensor([1.5, -2.0, 0.0], requires_grad=True)\ny = torch.tensor([0, 1, 3]) ** x", ["x"]),
    ("x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)\n"
     "w = torch.tensor([1.5, -2.0, 3.0], requires_grad=True)\ny = x ** w", ["x", "w"]),
]
grads = []
for code, leaves in GRADS:
    env = fresh_env()
    exec(code, env)
    out = env["y"].sum()
    out.backward()
    grads.append({"code": code, "leaves": leaves, "grad_fn": env["y"].grad_fn.name(), "out": record(env["y"]),
                  "grads": {name: record(env[name].grad) for name in leaves}})

write_json({"setup": SETUP, "cases": table, "grads": grads, "torch_version": torch.__version__},
           here("type_promotion.json"))
print(f"{len(table)} cases ({sum('error' in c for c in table)} errors), {len(grads)} gradient cases")
