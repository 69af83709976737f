# Module introspection as feature-extraction and fine-tuning code does it: forward hooks and forward pre-hooks
# collecting activations into a dict (and removed through their handles), named_modules / named_children /
# named_parameters / named_buffers with prefixes, model.apply with nn.init per layer type, ModuleDict, ModuleList,
# ParameterList and ParameterDict, the nested repr, train()/eval() propagation, freezing with requires_grad_ and
# optimizer param groups with their own learning rates.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.norm = nn.BatchNorm1d(d_out)
        self.drop = nn.Dropout(0.25)

    def forward(self, x):
        return self.drop(F.relu(self.norm(self.lin(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(Block(6, 8), Block(8, 8))
        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "reg": nn.Linear(8, 1)})
        self.extra = nn.ModuleList([nn.Identity(), nn.Tanh()])
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(3)), nn.Parameter(torch.full((1,), 0.5))])
        self.offsets = nn.ParameterDict({"cls": nn.Parameter(torch.zeros(3))})
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.calls += 1
        h = self.stem(x)
        for m in self.extra:
            h = m(h)
        return (self.heads["cls"](h) * self.scales[0] + self.offsets["cls"],
                self.heads["reg"](h) * self.scales[1])


model = Net()
print(model)
print("children:", [n for n, _ in model.named_children()])
print("modules:", [n for n, _ in model.named_modules()])
print("modules with prefix:", [n for n, _ in model.stem.named_modules(prefix="backbone")][:4])
print("params:", [(n, tuple(p.shape)) for n, p in model.named_parameters()])
print("params with prefix:", [n for n, _ in model.heads.named_parameters(prefix="heads")])
print("buffers:", [n for n, _ in model.named_buffers()])
print("non-recursive params:", [n for n, _ in model.named_parameters(recurse=False)])
print("count:", sum(p.numel() for p in model.parameters()))
print("types:", type(model.scales[0]), type(model.heads["cls"].weight.data), type(model.calls))
print("state_dict keys:", list(model.state_dict().keys()))
print("len/contains:", len(model.heads), "cls" in model.heads, len(model.scales), len(model.extra))
print("ModuleDict keys/items:", list(model.heads.keys()), [type(m).__name__ for _, m in model.heads.items()])


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain("relu"))
        nn.init.constant_(m.bias, 0.01)
    elif isinstance(m, nn.BatchNorm1d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


torch.manual_seed(1)
print("apply returns the model:", model.apply(init_weights) is model)
print("cls weight:", model.heads["cls"].weight[0])
print("cls bias:", model.heads["cls"].bias)

features, order = {}, []


def save_to(name):
    def hook(module, inputs, output):
        features[name] = output.detach()
        order.append(name)
    return hook


def pre_hook(module, inputs):
    order.append("pre:" + type(module).__name__)
    return (inputs[0] * 2,)          # replaces the input


handles = [model.stem[0].register_forward_hook(save_to("block0")),
           model.stem[1].lin.register_forward_hook(save_to("block1.lin")),
           model.heads["reg"].register_forward_pre_hook(pre_hook)]
x = torch.randn(5, 6)
model.eval()
print("training flags:", model.training, model.stem[0].drop.training, model.heads.training)
with torch.no_grad():
    cls_out, reg_out = model(x)
print("hook order:", order)
print("features:", {k: tuple(v.shape) for k, v in features.items()})
print("block0 mean: %.5f" % features["block0"].mean().item())
print("reg out:", reg_out.squeeze(1))
for h in handles:
    h.remove()
order.clear()
with torch.no_grad():
    _, reg_again = model(x)
print("after remove:", order, torch.allclose(reg_again * 2, reg_out) is False)
print("calls buffer:", model.calls)

grads = {}
bh = model.heads["cls"].register_full_backward_hook(
    lambda m, gin, gout: grads.update(gout=gout[0].abs().sum().item(), n_in=len(gin)))
model.train()
print("training flags:", model.training, model.stem[1].drop.training)
for p in model.stem.parameters():
    p.requires_grad_(False)
print("trainable:", [n for n, p in model.named_parameters() if p.requires_grad])
opt = torch.optim.SGD([
    {"params": model.heads.parameters(), "lr": 0.1},
    {"params": list(model.scales.parameters()) + list(model.offsets.parameters())},
], lr=0.01, momentum=0.9)
print([(len(g["params"]), g["lr"], g["momentum"]) for g in opt.param_groups])
target = torch.randint(0, 3, (5,))
for step in range(3):
    opt.zero_grad()
    c, r = model(x)
    loss = F.cross_entropy(c, target) + r.pow(2).mean()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.5f} gout {grads['gout']:.5f} n_in {grads['n_in']}")
bh.remove()
print("stem grads:", all(p.grad is None for p in model.stem.parameters()))
print("scales:", model.scales[1].data, model.offsets["cls"].data)
print("running mean:", model.stem[0].norm.running_mean[:3])
