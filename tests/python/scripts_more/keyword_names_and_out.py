# Arguments given as 1.13's schemas name them (torch.zeros(size=...), x.view(size=...), x.permute(dims=...),
# x.transpose(dim0=, dim1=), x.repeat(repeats=...), x.split(split_size=...)), out= on functions and factories
# (resizing with 1.13's warning, the dtype check, the autograd refusal naming the kernel matmul reaches, the
# (values, indices) pairs), and group.WORLD before, during and after a process group.
import os
import warnings

import tinyddp as torch
import tinyddp.distributed as dist


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:
        print(label, type(e).__name__, e)


x = torch.arange(6.).reshape(2, 3)
attempt("zeros", lambda: torch.zeros(size=(2, 2)))
attempt("ones", lambda: torch.ones(size=[3], dtype=torch.int64))
attempt("empty", lambda: torch.empty(size=(0, 4)).shape)
torch.manual_seed(0)
attempt("randn", lambda: torch.randn(size=(2,)))
attempt("rand", lambda: torch.rand(size=(1, 2)))
attempt("view", lambda: x.view(size=(3, 2)))
attempt("reshape", lambda: x.reshape(shape=(-1,)))
attempt("torch.reshape", lambda: torch.reshape(x, shape=(3, 2)))
attempt("permute", lambda: x.permute(dims=(1, 0)))
attempt("torch.permute", lambda: torch.permute(x, dims=[1, 0]))
attempt("transpose", lambda: x.transpose(dim0=0, dim1=1))
attempt("transpose one", lambda: x.transpose(0, dim1=1))
attempt("expand", lambda: torch.ones(1, 3).expand(size=(2, 3)))
attempt("repeat", lambda: x.repeat(repeats=(1, 2)))
attempt("tile", lambda: x.tile(dims=(2,)))
attempt("flip", lambda: torch.flip(x, dims=[1]))
attempt("split", lambda: x.split(split_size=1, dim=0))
attempt("new_zeros", lambda: x.new_zeros(size=(2,)))
attempt("new_ones", lambda: x.new_ones(size=[1, 2]))

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = torch.empty(2)
    result = torch.add(x, 1, out=out)
    print("add out", result is out, out)
    out = torch.empty(0)
    print("cat out", torch.cat([x, x], out=out) is out, out.shape)
    print("matmul out", torch.matmul(x, x.t(), out=torch.empty(2, 2)))
    print("sum out", torch.sum(x, 1, out=torch.empty(2)))
    print("float64 out", torch.mul(x, 2, out=torch.empty(2, 3, dtype=torch.float64)))
    print("int into float", torch.add(torch.arange(3), 1, out=torch.empty(3)))
    print("bool out", torch.gt(x, 2, out=torch.empty(2, 3, dtype=torch.bool)))
    print("arange out", torch.arange(3, out=torch.empty(3)))
    print("zeros out", torch.zeros(2, out=torch.empty(2, dtype=torch.int64)))
    print("linspace out", torch.linspace(0, 1, 3, out=torch.empty(3, dtype=torch.float64)))
    print("transposed out", torch.mul(x, 2, out=torch.empty(3, 2).t()))
    print("sort out", torch.sort(torch.tensor([3., 1., 2.]), out=(torch.empty(0), torch.empty(0, dtype=torch.long))))
    print("max out", torch.max(x, 1, out=[torch.empty(0), torch.empty(0, dtype=torch.long)]))
    out = torch.zeros(2, 3)
    before = out._version
    torch.sub(x, 1, out=out)
    print("version", before, out._version)
print("warnings", [str(w.message)[:100] for w in caught])

attempt("float into long", lambda: torch.add(x, 1, out=torch.empty(2, 3, dtype=torch.int64)))
attempt("float into bool", lambda: torch.add(x, 1, out=torch.empty(2, 3, dtype=torch.bool)))
w = torch.ones(2, 3, requires_grad=True)
attempt("add grad", lambda: torch.add(w, 1, out=torch.empty(2, 3)))
attempt("out grad", lambda: torch.add(x, 1, out=torch.empty(2, 3, requires_grad=True)))
attempt("cat grad", lambda: torch.cat([w, x], out=torch.empty(4, 3)))
attempt("matmul grad", lambda: torch.matmul(w, x.t(), out=torch.empty(0)))
attempt("matmul mv grad", lambda: torch.matmul(w, torch.ones(3), out=torch.empty(0)))
attempt("matmul bmm grad", lambda: torch.matmul(torch.ones(2, 2, 3, requires_grad=True), torch.ones(2, 3, 1),
                                                out=torch.empty(0)))
with torch.no_grad():
    attempt("no_grad", lambda: torch.add(w, 1, out=torch.empty(2, 3)).requires_grad)

print("WORLD before", dist.group.WORLD, dist.GroupMember.WORLD)
os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = "29613"
dist.init_process_group("gloo", rank=0, world_size=1)
print("WORLD during", dist.group.WORLD is None, dist.group.WORLD is dist.GroupMember.WORLD)
t = torch.ones(2)
dist.all_reduce(t, group=dist.group.WORLD)
print("all_reduce", t, dist.get_rank(group=dist.group.WORLD), dist.get_world_size(dist.GroupMember.WORLD))
dist.destroy_process_group()
print("WORLD after", dist.group.WORLD)
