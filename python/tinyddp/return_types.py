"""torch.return_types: the (values, indices) pairs of max, min, sort, topk, ... and aminmax's (min, max).

Each is a tuple (so `values, indices = x.max(0)` unpacks it) with its fields by name, printed and named as 1.13's
structseqs: `type(x.max(0))` is `<class 'torch.return_types.max'>`, the repr `torch.return_types.max(\\nvalues=...`.
"""


def _result_type(name, fields=("values", "indices")):
    def _repr(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"
    props = {f: property(lambda self, i=i: tuple.__getitem__(self, i)) for i, f in enumerate(fields)}
    cls = type(name, (tuple,), {"__repr__": _repr, "__module__": "torch.return_types", "__slots__": (),
                                "n_fields": len(fields), "n_sequence_fields": len(fields),
                                "n_unnamed_fields": 0, **props})
    cls.__qualname__ = name
    return cls


max = _result_type("max")  # noqa: A001  (1.13's names)
min = _result_type("min")  # noqa: A001
sort = _result_type("sort")
topk = _result_type("topk")
kthvalue = _result_type("kthvalue")
median = _result_type("median")
nanmedian = _result_type("nanmedian")
mode = _result_type("mode")
cummax = _result_type("cummax")
cummin = _result_type("cummin")
aminmax = _result_type("aminmax", ("min", "max"))
# what the same ops return when given out=(values, indices), max_out ... cummin_out: 1.13 names those types apart
for _op in ("max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin"):
    globals()[_op + "_out"] = _result_type(_op + "_out")
del _op
