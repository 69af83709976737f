"""tinyddp.save / tinyddp.load against PyTorch 1.13's checkpoint format (tests/golden/serialization.json and
torch_checkpoint.pt, written by tests/golden/gen_serialization.py), and pickling and copying of tensors,
Parameters and modules."""
import copy
import io
import json
import os
import pathlib
import pickle
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import tinyddp as torch

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "..", "golden")
sys.path.insert(0, GOLDEN_DIR)
import gen_serialization as gen  # noqa: E402  (build_native, describe, zip_entries; it imports no torch)

with open(os.path.join(GOLDEN_DIR, "serialization.json")) as _f:
    GOLDEN = json.load(_f)
TORCH_FILE = os.path.join(GOLDEN_DIR, "torch_checkpoint.pt")


def saved(obj, **kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer, **kwargs)
    return buffer.getvalue()


def roundtrip(obj, **kwargs):
    return torch.load(io.BytesIO(saved(obj)), **kwargs)


def globals_of(pickle_bytes):
    import pickletools
    return [arg for op, arg, _ in pickletools.genops(pickle_bytes) if op.name == "GLOBAL"]


# ---- files PyTorch 1.13 wrote ----

def test_torch_checkpoint_loads_exactly():
    ckpt = torch.load(TORCH_FILE, map_location="cpu")
    assert gen.describe(ckpt) == GOLDEN["content"]


def test_torch_checkpoint_views_share_one_storage():
    views = torch.load(TORCH_FILE)["views"]
    base, row, t, cols = views["base"], views["row"], views["t"], views["cols"]
    assert not cols.is_contiguous() and t.stride() == (1, 4) and row.storage_offset() == 4
    with torch.no_grad():
        row.narrow(0, 1, 1).fill_(-7.0)   # written through one view, seen through the others
    assert base.tolist()[1][1] == -7.0 and t.tolist()[1][1] == -7.0 and cols.tolist()[1][0] == -7.0


def test_torch_checkpoint_into_models_and_optimizers():
    ckpt = torch.load(TORCH_FILE, map_location=torch.device("cpu"))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.BatchNorm1d(2))
    model.load_state_dict(ckpt["model"])
    for name, value in model.state_dict().items():
        assert value.tolist() == ckpt["model"][name].tolist(), name
    assert ckpt["model"]._metadata == OrderedDict([("", {"version": 1}), ("0", {"version": 1}),
                                                   ("1", {"version": 1}), ("2", {"version": 2})])
    adam = torch.optim.Adam(model.parameters(), lr=0.01)
    adam.load_state_dict(ckpt["optimizer"])
    state = adam.state_dict()
    assert state["param_groups"] == ckpt["optimizer"]["param_groups"]
    assert state["state"][0]["step"].tolist() == 2.0
    assert state["state"][0]["exp_avg"].tolist() == ckpt["optimizer"]["state"][0]["exp_avg"].tolist()
    assert ckpt["epoch"] == 3 and ckpt["nested"]["tuple"][1]["x"].dtype is torch.float64


def test_torch_checkpoint_resaved_is_byte_identical():
    # load + save gives 1.13's file: the same entries, data.pkl and storage records, byte for byte
    with open(TORCH_FILE, "rb") as f:
        original = f.read()
    again = saved(torch.load(io.BytesIO(original)))
    a, b = zipfile.ZipFile(io.BytesIO(original)), zipfile.ZipFile(io.BytesIO(again))
    assert a.namelist() == b.namelist()
    for name in a.namelist():
        assert a.read(name) == b.read(name), name
    assert gen.zip_entries(again) == GOLDEN["entries"]


# ---- files tinyddp writes ----

def test_native_pickle_is_1_13s():
    data = saved(gen.build_native(torch))
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert zf.namelist() == GOLDEN["native"]["entries"]
    pkl = zf.read("archive/data.pkl")
    assert globals_of(pkl) == globals_of(bytes.fromhex(GOLDEN["native"]["data_pkl"]))
    assert pkl.hex() == GOLDEN["native"]["data_pkl"]
    assert zf.read("archive/version") == GOLDEN["version_record"].encode()
    assert all(offset == 0 for _, offset in gen.zip_entries(data))   # 64-byte aligned records
    assert gen.describe(torch.load(io.BytesIO(data))) == GOLDEN["native"]["content"]


@pytest.mark.parametrize("name,folder", [("ckpt.pt", "ckpt"), ("my ckpt.v1.pt", "my ckpt.v1"), ("ckpt", "ckpt"),
                                         ("x.", "x")])
def test_record_folder_is_the_file_name(tmp_path, name, folder):
    torch.save({"a": torch.ones(1)}, tmp_path / name)   # a pathlib.Path
    assert zipfile.ZipFile(tmp_path / name).namelist() == [f"{folder}/data.pkl", f"{folder}/data/0",
                                                           f"{folder}/version"]
    assert torch.load(str(tmp_path / name))["a"].tolist() == [1.0]


def test_invalid_file_name(tmp_path):
    with pytest.raises(RuntimeError, match="invalid file name"):
        torch.save(1, str(tmp_path / ".pt"))


def test_ddp_style_checkpoint_round_trip(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(5, 3)
    for _ in range(2):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
    path = os.path.join(tmp_path, "ckpt.pt")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}, path)
    ckpt = torch.load(path, map_location="cpu")
    torch.manual_seed(1)
    model2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    opt2 = torch.optim.SGD(model2.parameters(), lr=0.1, momentum=0.9)
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optimizer"])
    assert ckpt["epoch"] == 3
    for opt_, model_ in ((opt, model), (opt2, model2)):
        opt_.zero_grad()
        model_(x).sum().backward()
        opt_.step()
    for p, q in zip(model.parameters(), model2.parameters()):
        assert p.tolist() == q.tolist()


def test_ddp_module_state_dict(tmp_path):
    import tinyddp.distributed as dist
    from tinyddp.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        ddp = DDP(torch.nn.Linear(2, 2))
        path = tmp_path / "ddp.pt"
        torch.save(ddp.module.state_dict(), path)
        other = torch.nn.Linear(2, 2)
        other.load_state_dict(torch.load(path))
        assert other.weight.tolist() == ddp.module.weight.tolist()
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool])
def test_every_dtype_round_trips(dtype):
    t = torch.tensor([[0, 1, 1], [1, 0, 1]], dtype=dtype)
    for x in (t, t.t(), t[1], t[:, 1:3], torch.tensor(1, dtype=dtype), torch.zeros(0, 3, dtype=dtype)):
        y = roundtrip(x)
        assert y.dtype is dtype and y.shape == x.shape and y.stride() == x.stride()
        assert y.storage_offset() == x.storage_offset() and y.tolist() == x.tolist()


def test_views_load_as_views_of_one_storage():
    base = torch.arange(12).reshape(3, 4).double()
    out = roundtrip([base, base[1], base.t(), base[:, 1:3], torch.ones(2)])
    assert out[1].storage_offset() == 4 and out[2].stride() == (1, 4) and out[3].stride() == (4, 1)
    assert len({t.storage().data_ptr() for t in out[:4]}) == 1 and out[4].storage().data_ptr() != out[0].data_ptr()
    assert len(zipfile.ZipFile(io.BytesIO(saved([base, base[1]]))).namelist()) == 3   # data.pkl, data/0, version
    out[1].fill_(-1.0)
    assert out[0].tolist()[1] == [-1.0] * 4


def test_same_tensor_twice_loads_as_one_object():
    t = torch.ones(2)
    a, b = roundtrip([t, t])
    assert a is b


def test_nested_containers_and_python_values():
    obj = {"list": [1, 2.5, "s", None, True, b"raw"], "tuple": (torch.ones(1), {"deep": [torch.zeros(2)]}),
           "ordered": OrderedDict(b=1, a=2), "set": {1, 2}, "dtype": torch.int64, "size": torch.Size([2, 3]),
           "device": torch.device("cpu")}
    out = roundtrip(obj)
    assert out["list"] == obj["list"] and out["ordered"] == obj["ordered"] and list(out["ordered"]) == ["b", "a"]
    assert out["set"] == {1, 2} and out["dtype"] is torch.int64 and out["device"] == torch.device("cpu")
    assert type(out["size"]) is torch.Size and out["size"] == (2, 3)
    assert out["tuple"][1]["deep"][0].tolist() == [0.0, 0.0]
    # the GLOBALs 1.13's torch.save writes for this object (protocol 2 pickles bytes and sets as these too)
    assert globals_of(zipfile.ZipFile(io.BytesIO(saved(obj))).read("archive/data.pkl")) == [
        "_codecs encode", "torch._utils _rebuild_tensor_v2", "torch FloatStorage", "collections OrderedDict",
        "__builtin__ set", "torch int64", "torch Size", "torch device"]


def test_parameters_and_requires_grad():
    p, frozen = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(1), requires_grad=False)
    leaf = torch.ones(3).requires_grad_()
    out = roundtrip([p, frozen, leaf, leaf * 2])
    assert type(out[0]) is torch.nn.Parameter and out[0].requires_grad
    assert type(out[1]) is torch.nn.Parameter and not out[1].requires_grad
    assert type(out[2]) is torch.Tensor and out[2].requires_grad and out[2].is_leaf
    assert out[3].is_leaf and out[3].requires_grad and out[3].tolist() == [2.0] * 3   # history is not saved
    assert "torch._utils _rebuild_parameter" in globals_of(zipfile.ZipFile(io.BytesIO(saved(p))).read(
        "archive/data.pkl"))


def test_file_objects_and_pathlike(tmp_path):
    path = tmp_path / "f.pt"
    with open(path, "wb") as f:
        torch.save({"x": torch.ones(2)}, f)
    assert zipfile.ZipFile(path).namelist()[0] == "archive/data.pkl"
    with open(path, "rb") as f:
        assert torch.load(f)["x"].tolist() == [1.0, 1.0]
    assert torch.load(pathlib.Path(path))["x"].tolist() == [1.0, 1.0]


# ---- map_location, weights_only, pickle_module ----

def test_map_location_forms():
    data = saved({"x": torch.ones(2)})
    for ml in ("cpu", torch.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s, lambda s, loc: None,
               lambda s, loc: s.cpu()):
        assert torch.load(io.BytesIO(data), map_location=ml)["x"].tolist() == [1.0, 1.0]
    seen = []
    torch.load(io.BytesIO(data), map_location=lambda s, loc: seen.append((loc, s.dtype, s.size())))
    assert seen == [("cpu", torch.float32, 2)]


def test_map_location_cuda_fails_as_on_a_cpu_only_pytorch():
    data = saved({"x": torch.ones(2)})
    message = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
               "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to "
               "map your storages to the CPU.")
    for ml in ("cuda", "cuda:0", torch.device("cuda", 1), {"cpu": "cuda:0"}):
        with pytest.raises(RuntimeError) as e:
            torch.load(io.BytesIO(data), map_location=ml)
        assert str(e.value) == message
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.load(io.BytesIO(data), map_location=lambda s, loc: s.cuda(0))
    with pytest.raises(RuntimeError, match=r"don't know how to restore data location .* \(tagged with xla\)"):
        torch.load(io.BytesIO(data), map_location="xla")


def test_cuda_location_in_file_needs_map_location():
    # a checkpoint saved on a GPU: its storages say 'cuda:0'
    data = saved({"x": torch.ones(2)})
    zf = zipfile.ZipFile(io.BytesIO(data))
    records = {n: zf.read(n) for n in zf.namelist()}
    pkl = records["archive/data.pkl"].replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    assert pkl != records["archive/data.pkl"]
    records["archive/data.pkl"] = pkl
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name, value in records.items():
            out.writestr(name, value)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(io.BytesIO(buffer.getvalue()))
    assert torch.load(io.BytesIO(buffer.getvalue()), map_location="cpu")["x"].tolist() == [1.0, 1.0]
    assert torch.load(io.BytesIO(buffer.getvalue()), map_location={"cuda:0": "cpu"})["x"].tolist() == [1.0, 1.0]


class Custom:
    def __init__(self, value):
        self.value = value


def test_weights_only():
    ckpt = torch.load(TORCH_FILE, weights_only=True)
    assert gen.describe(ckpt) == GOLDEN["content"]
    data = saved({"obj": Custom(3)})
    assert torch.load(io.BytesIO(data))["obj"].value == 3
    with pytest.raises(pickle.UnpicklingError) as e:
        torch.load(io.BytesIO(data), weights_only=True)
    assert str(e.value) == ("Weights only load failed. Re-running `torch.load` with `weights_only` set to `False` "
                            "will likely succeed, but it can result in arbitrary code execution.Do it only if you "
                            "get the file from a trusted source. WeightsUnpickler error: Unsupported class "
                            f"{__name__}.Custom")
    with pytest.raises(pickle.UnpicklingError, match="Unsupported class torch.device"):
        torch.load(io.BytesIO(saved(torch.device("cpu"))), weights_only=True)
    with pytest.raises(RuntimeError, match="Can not safely load weights when expiclit picke_module is specified"):
        torch.load(io.BytesIO(data), weights_only=True, pickle_module=pickle)


def test_pickle_module_argument():
    data = saved({"x": torch.ones(1)}, pickle_module=pickle, pickle_protocol=2)
    assert torch.load(io.BytesIO(data), pickle_module=pickle)["x"].tolist() == [1.0]
    with pytest.raises(TypeError, match="pure-Python Pickler"):
        torch.save(1, io.BytesIO(), pickle_module=json)


# ---- errors ----

def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such file or directory"):
        torch.load(str(tmp_path / "nope.pt"))


def test_not_a_checkpoint(tmp_path):
    path = tmp_path / "text.pt"
    path.write_text("hello")
    with pytest.raises(pickle.UnpicklingError, match="is not a checkpoint: it is not a zip archive"):
        torch.load(path)
    zip_path = tmp_path / "other.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(pickle.UnpicklingError, match="not a torch.save checkpoint"):
        torch.load(zip_path)
    with pytest.raises(EOFError):
        torch.load(io.BytesIO(b""))


def test_legacy_format_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="legacy format of _use_new_zipfile_serialization=False"):
        torch.save(1, io.BytesIO(), _use_new_zipfile_serialization=False)
    # the head of a 1.13 legacy file: the pickled magic number, then the protocol version
    legacy = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(1001, protocol=2)
    with pytest.raises(RuntimeError, match="legacy format .* tinyddp reads the zip format only"):
        torch.load(io.BytesIO(legacy))


def test_unsupported_dtype_in_checkpoint():
    data = saved({"x": torch.ones(2)})
    zf = zipfile.ZipFile(io.BytesIO(data))
    records = {n: zf.read(n) for n in zf.namelist()}
    records["archive/data.pkl"] = records["archive/data.pkl"].replace(b"ctorch\nFloatStorage\n",
                                                                      b"ctorch\nHalfStorage\n")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name, value in records.items():
            out.writestr(name, value)
    with pytest.raises(pickle.UnpicklingError, match=r"torch.HalfStorage \(dtype float16\), which tinyddp does not "
                                                     "have; tinyddp has torch.float32"):
        torch.load(io.BytesIO(buffer.getvalue()))


def test_truncated_storage_record():
    data = saved({"x": torch.ones(4)})
    zf = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for name in zf.namelist():
            out.writestr(name, zf.read(name)[:8] if name.endswith("data/0") else zf.read(name))
    with pytest.raises(pickle.UnpicklingError, match="holds 8 bytes, but its storage is 4 elements"):
        torch.load(io.BytesIO(buffer.getvalue()))


# ---- pickling and copying ----

def test_tensor_pickle_and_copy():
    x = torch.arange(6).reshape(2, 3).float().requires_grad_()
    y = pickle.loads(pickle.dumps(x.t()))
    assert y.tolist() == x.t().tolist() and y.stride() == (1, 3) and y.requires_grad and y.is_leaf
    c = copy.copy(x * 2)   # 1.13: a new leaf requiring grad, sharing the storage
    assert c.is_leaf and c.requires_grad and c.grad_fn is None
    shallow = copy.copy(x)
    assert shallow.data_ptr() == x.data_ptr() and shallow.requires_grad


def test_tensor_deepcopy():
    x = torch.arange(6).reshape(2, 3).float().requires_grad_()
    x.grad = torch.ones(2, 3)
    d = copy.deepcopy(x)
    assert d.requires_grad and d.is_leaf and d.data_ptr() != x.data_ptr() and d.grad.tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError) as e:
        copy.deepcopy(x * 2)
    assert str(e.value) == ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                            "protocol at the moment")
    base = torch.arange(12).double()
    views = copy.deepcopy({"a": base, "b": base[3:5], "c": base.reshape(3, 4).t()})
    assert views["b"].data_ptr() - views["a"].data_ptr() == 24 and views["c"].stride() == (1, 4)
    assert views["a"].data_ptr() != base.data_ptr()
    views["b"].fill_(-1.0)
    assert views["a"].tolist()[3:5] == [-1.0, -1.0] and base.tolist()[3] == 3.0


def test_parameter_pickle_and_deepcopy():
    p = torch.nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    d = copy.deepcopy(p)
    assert type(d) is torch.nn.Parameter and d.requires_grad and d.grad is None and d.data_ptr() != p.data_ptr()
    frozen = pickle.loads(pickle.dumps(torch.nn.Parameter(torch.ones(1), requires_grad=False)))
    assert type(frozen) is torch.nn.Parameter and not frozen.requires_grad


def test_model_deepcopy_and_pickle():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.BatchNorm1d(2))
    model[0].bias.requires_grad_(False)
    model.eval()   # the forwards below leave the running stats as they are
    state = torch.get_rng_state()
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert torch.get_rng_state() == state   # no init, no draw
        assert [n for n, _ in clone.named_parameters()] == [n for n, _ in model.named_parameters()]
        for (name, a), b in zip(clone.state_dict().items(), model.state_dict().values()):
            assert a.tolist() == b.tolist() and a.data_ptr() != b.data_ptr(), name
        assert not clone[0].bias.requires_grad and clone[0].weight.requires_grad
        x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]])
        assert clone(x).tolist() == model(x).tolist()
        with torch.no_grad():
            clone[0].weight.fill_(0.0)   # the copy computes with its own tensors
        assert clone[0](x).tolist() != model[0](x).tolist()


def test_whole_model_save_load(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    torch.save(model, tmp_path / "model.pt")
    loaded = torch.load(tmp_path / "model.pt")
    x = torch.ones(1, 3)
    assert type(loaded) is torch.nn.Sequential and loaded(x).tolist() == model(x).tolist()


def test_from_numpy_of_unpickled_arrays():
    for a in (np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float64), np.arange(3, dtype=np.int64),
              np.array([True, False])):
        b = pickle.loads(pickle.dumps(a))
        t = torch.from_numpy(b)
        assert t.tolist() == a.tolist()
    assert torch.from_numpy(np.arange(2, dtype=np.dtype("<f4"))).dtype is torch.float32


def test_torch_is_not_imported():
    # tinyddp writes and reads torch's names without torch (the tests must not import it either)
    assert "torch" not in sys.modules


def test_stride_and_storage_offset():
    t = torch.ones(2, 3).t()
    assert t.stride() == (1, 3) and t.stride(-1) == 3 and t.storage_offset() == 0 and torch.tensor(1.0).stride() == ()
    assert torch.ones(2, 3)[1].storage_offset() == 3 and len(torch.ones(2, 3)[1].storage()) == 6
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        t.stride(2)
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        torch.tensor(1.0).stride(0)
