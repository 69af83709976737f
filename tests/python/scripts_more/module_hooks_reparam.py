# Hooks and reparametrisations as research code uses them: global forward hooks that profile every layer's
# output shape (register_module_forward_pre_hook / register_module_forward_hook), load_state_dict post-hooks
# that log and forgive keys during a partial checkpoint load, weight_norm on Linear and Conv1d layers (the g / v
# parameters, the pre-hook recomputing the weight, training, remove_weight_norm), a Linear whose weight Parameter
# is replaced, Module.type(), and torch.random.fork_rng keeping a data-augmentation draw from shifting the
# training stream.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from tinyddp.nn.utils import remove_weight_norm, weight_norm

torch.manual_seed(0)


class TCNBlock(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(c_in, c_out, 3, padding=1))
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = TCNBlock(2, 4)
        self.head = weight_norm(nn.Linear(4, 1))

    def forward(self, x):
        return self.head(self.block(x).mean(-1))


net = Net()
print(net)
print("params:", [(n, tuple(p.shape)) for n, p in net.named_parameters()])
print("weight is a Parameter:", isinstance(net.head.weight, nn.Parameter), net.head.weight.grad_fn.name())
print("g:", net.head.weight_g.view(-1), "||w|| rows:", net.head.weight.norm(dim=1))

shapes = []
pre = register_module_forward_pre_hook(lambda m, inp: shapes.append(("in", type(m).__name__, tuple(inp[0].shape))))
post = register_module_forward_hook(lambda m, inp, out: shapes.append(("out", type(m).__name__, tuple(out.shape))))
x = torch.randn(6, 2, 8)
y = torch.randn(6, 1)
net(x)
pre.remove()
post.remove()
for entry in shapes:
    print(*entry)
net(x)
print("hooks removed:", len(shapes))

opt = torch.optim.Adam(net.parameters(), lr=0.05)
for step in range(15):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.5f} g {net.head.weight_g.item():.5f}")
print("v grad norm: %.5f" % net.head.weight_v.grad.norm().item())
stale = net.head.weight.detach().clone()   # computed by the last forward, before the last step
w_now = (net.head.weight_g * net.head.weight_v / net.head.weight_v.norm(dim=1, keepdim=True)).detach()
remove_weight_norm(net.head)
print("after remove:", [n for n, _ in net.head.named_parameters()], torch.allclose(net.head.weight, w_now), torch.allclose(net.head.weight, stale))
try:
    remove_weight_norm(net.head)
except ValueError as e:
    print("ValueError:", e)

log = []
net.register_load_state_dict_post_hook(lambda m, keys: log.append((len(keys.missing_keys), list(keys.unexpected_keys))))


def forgive_extra(module, keys):
    keys.unexpected_keys[:] = [k for k in keys.unexpected_keys if not k.startswith("aux.")]


net.register_load_state_dict_post_hook(forgive_extra)
ckpt = {k: v.clone() for k, v in net.state_dict().items()}
ckpt["aux.scale"] = torch.ones(1)
print(net.load_state_dict(ckpt))
print("log:", log)
del ckpt["head.bias"]
try:
    net.load_state_dict(ckpt)
except RuntimeError as e:
    print("RuntimeError:", e)

lin = nn.Linear(3, 2)
lin.weight = nn.Parameter(torch.ones(2, 3))
print("replaced weight:", lin(torch.ones(1, 3)), [n for n, _ in lin.named_parameters()])
print("type:", nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).type(torch.float64)[1].num_batches_tracked.dtype)

torch.manual_seed(5)
with torch.random.fork_rng():
    aug = torch.rand(3)
after = torch.rand(3)
torch.manual_seed(5)
print("fork_rng kept the stream:", torch.equal(after, torch.rand(3)), torch.equal(aug, after))
