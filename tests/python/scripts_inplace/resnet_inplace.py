# A ResNet basic block as torchvision writes it (conv-bn-ReLU(inplace=True)-conv-bn, `out += identity`, then
# ReLU(inplace=True)) trained two steps: the output's history, values and gradients; the same block behind a
# register_full_backward_hook (1.13's error for the in-place ReLU on what the hooked module returned) and the fix;
# and the error of an in-place ReLU on a sigmoid's output, at backward.
import tinyddp as torch
import tinyddp.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity
        out = self.relu(out)
        return out


torch.manual_seed(0)
block = BasicBlock(2)
opt = torch.optim.SGD(block.parameters(), lr=0.05, momentum=0.9)
x = torch.randn(2, 2, 4, 4)
target = torch.randn(2, 2, 4, 4)
for step in range(2):
    opt.zero_grad()
    out = block(x)
    print("grad_fn", out.grad_fn.name(), [n.name() if n else None for n, _ in out.grad_fn.next_functions],
          "version", out._version)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    print(f"step {step} loss {loss.item():.5f} zeros {int((out == 0).sum())}")
    print(" conv1 grad", [f"{v:.4f}" for v in block.conv1.weight.grad.view(-1).tolist()[:5]])
    print(" bn2 grads", [f"{v:.4f}" for v in block.bn2.weight.grad.tolist()], [f"{v:.4f}" for v in
                                                                            block.bn2.bias.grad.tolist()])
    opt.step()
print("running mean", [f"{v:.4f}" for v in block.bn1.running_mean.tolist()], block.bn1.running_mean._version)

# input that requires grad: the residual's gradient reaches it
xi = x.clone().requires_grad_()
block(xi).sum().backward()
print("input grad", [f"{v:.4f}" for v in xi.grad.view(-1).tolist()[:6]])

hooked = BasicBlock(2)
seen = []
hooked.bn1.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].shape))
try:
    hooked(x)
except RuntimeError as e:
    print("hook error:", e)
hooked.relu = nn.ReLU()
hooked(x).sum().backward()
print("hook saw", seen)

net = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.ReLU(inplace=True))
y = net(torch.randn(2, 3))
print("sigmoid then relu_:", y.grad_fn.name(), y._version)
try:
    y.sum().backward()
except RuntimeError as e:
    print("error:", e)
