# The torch API CPU training scripts use beyond tensor math (torch.linalg norms and torch.norm, amax/amin,
# inference_mode, autocast and GradScaler without CUDA, dtype objects, finfo/iinfo, __version__, backends,
# threads and determinism, torch.cuda without CUDA, bincount, isin, logspace, detach_, Variable) against real
# PyTorch 1.13 (tests/golden/gen_api_more.py -> api_more.json): each case's snippet run through tinyddp, its
# results (shape, dtype, values, requires_grad, grad_fn, is_inference; Python values; reprs), the gradients of its
# leaves, its warnings, or its error's type and message. Then what only tinyddp does (the dtypes it has no tensors
# of, bfloat16 autocast), checked against its own contract.
import json
import os

import numpy as np
import pytest

import tinyddp as torch

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
GOLDEN = json.load(open(os.path.join(GOLDEN_DIR, "api_more.json")))
CASES = [c for c in GOLDEN["cases"] if "error" not in c]
ERRORS = [c for c in GOLDEN["cases"] if "error" in c]
# the norms of other orders than 2, 1, 0 and inf accumulate in float64 and round once (1.13: in float32)
RTOL, ATOL = 2e-6, 1e-6
# cases whose float32 values must be 1.13's bit for bit (the same arithmetic in the same order)
EXACT = {"logspace", "bincount", "bincount_float32_order", "bincount_labels", "amax_amin", "amax_amin_dtypes",
         "vector_norm_bitwise", "torch_norm_zero_grad", "matrix_norm_ties"}
# grad_fn names that are composed ops' in tinyddp (docs/python.md): logsumexp (1.13: LogsumexpBackward0), a
# custom autograd.Function's output (1.13: FBackward) and gather, under take_along_dim (1.13: GatherBackward0)
GRAD_FN_DIVERGES = {"logsumexp_after_amax", "custom_fwd_bwd", "take_along_dim"}


import api_more_cases as _RUNNER  # noqa: E402  (tests/golden, on sys.path: conftest.py)


@pytest.fixture(autouse=True)
def _restore_global_settings():
    """Cases set process-wide flags (determinism, threads, cudnn); each starts from 1.13's defaults."""
    yield
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.deterministic = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.enabled = True


def same_values(got, want, what, exact):
    g = np.array(got, dtype=np.float64)
    w = np.array(want, dtype=np.float64)
    assert g.shape == w.shape, f"{what}: {g.shape} values vs {w.shape}"
    if exact:
        assert np.array_equal(g, w, equal_nan=True), f"{what}: got {got} want {want}"
        return
    ok = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
    assert ok.all(), f"{what}: max |diff| = {np.nanmax(np.abs(g - w))}; got {got} want {want}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_results_gradients_and_warnings_match_pytorch(case):
    outs, grads, caught = _RUNNER.run(torch, case["code"])
    exact = case["id"] in EXACT
    assert len(outs) == len(case["outs"]), "number of results"
    for k, (got, want) in enumerate(zip(outs, case["outs"])):
        enc = _RUNNER.encode(torch, got)
        if "values" not in want:
            assert enc == want, f"result {k}: {enc} vs {want}"
            continue
        assert "values" in enc, f"result {k}: {enc}, not a tensor"
        for key in ("shape", "dtype", "requires_grad", "grad_fn", "is_inference"):
            if key == "grad_fn" and case["id"] in GRAD_FN_DIVERGES:
                continue
            assert enc[key] == want[key], f"result {k}: {key} {enc[key]!r} vs {want[key]!r}"
        same_values(enc["values"], want["values"], f"result {k}", exact)
    assert sorted(grads) == sorted(case["grads"]), "leaves with gradients"
    for name, want in case["grads"].items():
        assert list(grads[name].shape) == want["shape"]
        same_values(grads[name].reshape(-1).tolist(), want["values"], f"{name}.grad", exact)
    assert caught == case["warnings"]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c["id"])
def test_errors_match_pytorch(case):
    with pytest.raises(Exception) as info:
        _RUNNER.run(torch, case["code"])
    assert type(info.value).__name__ == case["error"]["type"]
    assert str(info.value) == case["error"]["message"]


# ---- what only tinyddp does ----

@pytest.mark.parametrize("make", [
    lambda: torch.zeros(2, dtype=torch.int32), lambda: torch.tensor([1, 2], dtype=torch.uint8),
    lambda: torch.ones(3).half(), lambda: torch.ones(3).to(torch.bfloat16), lambda: torch.ones(3).byte(),
    lambda: torch.ones(3).type(torch.float16), lambda: torch.randn(2, dtype=torch.float16),
    lambda: torch.linalg.vector_norm(torch.ones(2), dtype=torch.float16)])
def test_tensors_of_dtypes_the_engine_lacks_raise_naming_the_supported_ones(make):
    with pytest.raises(NotImplementedError, match=r"tinyddp's tensors are torch\.float32 \(torch\.float\), "
                                                  r"torch\.float64 \(torch\.double\), torch\.int64 \(torch\.long\) "
                                                  r"or torch\.bool"):
        make()


def test_int_gives_int64_the_integer_dtype_tinyddp_has():
    assert torch.tensor([1.5, -2.5]).int().dtype is torch.int64


def test_enabled_cpu_bfloat16_autocast_raises_when_entered_and_leaves_the_state():
    region = torch.autocast("cpu")   # 1.13: runs the region's ops in bfloat16
    with pytest.raises(NotImplementedError, match="CPU autocast to torch.bfloat16 is not supported"):
        with region:
            pass
    assert not torch.is_autocast_cpu_enabled()
    with torch.cpu.amp.autocast(enabled=False):   # disabled: a plain region
        assert not torch.is_autocast_cpu_enabled()


def test_default_dtype_cannot_become_float64():
    with pytest.raises(NotImplementedError, match="the default dtype is torch.float32"):
        torch.set_default_dtype(torch.float64)
    assert torch.get_default_dtype() is torch.float32


def test_default_thread_count_is_atens():
    # ATen's default on x86-64 without OMP_NUM_THREADS / MKL_NUM_THREADS: half the CPUs (hyperthreads), at least 1
    if "OMP_NUM_THREADS" not in os.environ and "MKL_NUM_THREADS" not in os.environ:
        assert torch.get_num_threads() == max((os.cpu_count() or 1) // 2, 1)
    assert torch.get_num_interop_threads() >= 1


def test_linalg_functions_tinyddp_lacks_say_what_it_has():
    with pytest.raises(AttributeError, match="has norm, vector_norm and matrix_norm only"):
        torch.linalg.svd
    assert not hasattr(torch.linalg, "inv")
    for ord_ in (2, -2, "nuc"):
        with pytest.raises(NotImplementedError, match="needs singular values"):
            torch.linalg.matrix_norm(torch.ones(2, 2), ord_)


def test_inference_mode_is_per_thread():
    import threading
    seen = {}

    def other():
        seen["inference"] = torch.is_inference_mode_enabled()
        seen["tensor"] = torch.ones(1).is_inference()

    with torch.inference_mode():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == {"inference": False, "tensor": False}
