# A small CNN on 8x8 "images": Conv2d, MaxPool2d, AvgPool2d, Flatten, training with SGD, accuracy.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(4, 6, 3, stride=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(6 * 2 * 2, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = F.avg_pool2d(x, 1)
        return self.fc(torch.flatten(x, 1))


torch.manual_seed(0)
net = Net()
print(net)
print([tuple(p.shape) for p in net.parameters()])
print(net.conv1.weight.detach()[0, 0, 0], f"{net.conv2.bias.sum().item():.5f}")  # 5 decimals: summation order
images = torch.randn(6, 1, 8, 8)
labels = torch.tensor([0, 1, 2, 0, 1, 2])
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for epoch in range(4):
    opt.zero_grad()
    out = net(images)
    loss = F.cross_entropy(out, labels)
    loss.backward()
    opt.step()
    acc = (out.argmax(1) == labels).float().mean().item()
    print(f"epoch {epoch} loss {loss.item():.4f} acc {acc:.4f}")
print(out.shape, f"{net.conv1.weight.grad.abs().sum().item():.4f}")
x = torch.arange(16.0).view(1, 1, 4, 4)
print(F.max_pool2d(x, 2), F.avg_pool2d(x, 2, stride=1).shape, nn.MaxPool2d(3, stride=1, padding=1)(x)[0, 0, 0])
print(F.conv2d(x, torch.ones(1, 1, 2, 2), stride=2), F.conv2d(x[0], torch.ones(2, 1, 3, 3), padding=1).shape)
