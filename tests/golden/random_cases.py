"""The steps of random.json's cases, written once: gen_random.py draws them with PyTorch 1.13 and
tests/python/test_random.py with tinyddp; each takes the torch-like module as its argument."""


def run_step(torch, step, gen):
    """The tensors one step of a case gives, drawn with `torch` (the default stream, or `gen` if not None)."""
    op, dtype = step["op"], getattr(torch, step.get("dtype", "float32"))
    kw = {"generator": gen} if gen is not None else {}
    if op == "randn":
        return [torch.randn(step["shape"], dtype=dtype, **kw)]
    if op == "rand":
        return [torch.rand(step["shape"], dtype=dtype, **kw)]
    if op == "randint":
        return [torch.randint(step["low"], step["high"], step["shape"], **kw)]
    if op == "randperm":
        return [torch.randperm(step["n"], **kw)]
    if op in ("normal_", "uniform_", "bernoulli_", "random_"):
        t = torch.empty(step["shape"], dtype=dtype)
        if step.get("transposed"):   # a non-contiguous target: PyTorch picks the draw by the layout
            t = torch.empty(list(reversed(step["shape"])), dtype=dtype).t()
        assert getattr(t, op)(*step.get("args", []), **kw) is t   # in place, returning self
        return [t]
    if op == "linear":
        layer = torch.nn.Linear(step["in"], step["out"], bias=step.get("bias", True), dtype=dtype)
        return [layer.weight] + ([layer.bias] if layer.bias is not None else [])
    if op == "embedding":
        return [torch.nn.Embedding(step["num"], step["dim"]).weight]
    if op == "init":   # nn.init.NAME_(empty(shape), **kwargs)
        t = torch.empty(step["shape"], dtype=dtype)
        getattr(torch.nn.init, step["name"])(t, **step.get("kwargs", {}))
        return [t]
    if op == "dropout":
        return [torch.nn.functional.dropout(torch.ones(step["shape"], dtype=dtype), step["p"])]
    raise ValueError(op)
