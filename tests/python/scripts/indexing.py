# Indexing: integers, slices, negative indices, boolean masks, lists and tensors, steps and their errors.
import tinyddp as torch


def show(label, fn):
    try:
        print(label, fn())
    except Exception as e:  # noqa: BLE001
        print(label, "raised", type(e).__name__, e)


x = torch.arange(20).view(4, 5)
show("int", lambda: x[1])
show("neg", lambda: x[-1, -2])
show("slice", lambda: x[1:3, 2:])
show("col", lambda: x[:, 0])
show("ellipsis", lambda: x[..., 1])
show("none", lambda: x[None].shape)
show("step", lambda: x[::2].tolist())
show("neg step", lambda: x[::-1])
show("mask", lambda: x[x % 2 == 0])
show("mask rows", lambda: x[torch.tensor([True, False, True, False])])
show("list", lambda: x[[0, 2]])
show("tensor idx", lambda: x[torch.tensor([3, 1])])
show("out of range", lambda: x[4])
show("too many", lambda: x[0, 0, 0])
show("item", lambda: x[2, 3].item())
y = torch.zeros(3, 4)
y[0] = 1.0
y[1, 2:] = 5.0
y[:, 0] = torch.tensor([7.0, 8.0, 9.0])
show("setitem", lambda: y)
z = torch.zeros(5)
z[z == 0] = 2.0
show("mask setitem", lambda: z)
w = torch.randn(3, requires_grad=True)
(w[0] * 2 + w[1:].sum()).backward()
show("grad", lambda: w.grad)
