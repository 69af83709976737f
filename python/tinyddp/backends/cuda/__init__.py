"""torch.backends.cuda on a build without CUDA: is_built() False; matmul's TF32 and reduced-precision flags kept
with 1.13's defaults and checks (any other attribute: AssertionError "Unknown attribute ...")."""


def is_built():
    return False


class cuBLASModule:
    _FLAGS = {"allow_tf32": "set_allow_tf32_cublas",
              "allow_fp16_reduced_precision_reduction": "set_allow_fp16_reduction_cublas"}

    def __init__(self):
        object.__setattr__(self, "_values", {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True})

    def __getattr__(self, name):
        if name in self._FLAGS:
            return self._values[name]
        raise AssertionError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name not in self._FLAGS:
            raise AssertionError("Unknown attribute " + name)
        if not isinstance(value, bool):
            raise RuntimeError(f"{self._FLAGS[name]} expects a bool, but got {type(value).__name__}")
        self._values[name] = value


matmul = cuBLASModule()
