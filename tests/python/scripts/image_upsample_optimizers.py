# A tiny encoder-decoder on 8x8 images (Conv2d, InstanceNorm2d, Dropout2d, ReflectionPad2d, Upsample, PixelShuffle,
# AdaptiveAvgPool2d) trained with NAdam, then the same regression under each of torch.optim's other optimizers.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class EncoderDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(1, 4, 3), nn.InstanceNorm2d(4, affine=True),
                                    nn.SiLU(), nn.Dropout2d(0.2), nn.Conv2d(4, 8, 3, stride=2, padding=1))
        self.decode = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear"), nn.Conv2d(8, 4, 3, padding=1),
                                    nn.ZeroPad2d((0, 0, 0, 0)), nn.PixelShuffle(2), nn.AdaptiveAvgPool2d((8, 8)))

    def forward(self, x):
        return self.decode(self.encode(x))


torch.manual_seed(0)
net = EncoderDecoder()
print(net)
print([tuple(p.shape) for p in net.parameters()])
images = torch.randn(4, 1, 8, 8)
opt = torch.optim.NAdam(net.parameters(), lr=0.01)
for step in range(4):
    opt.zero_grad()
    loss = F.mse_loss(net(images), images)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
print(opt.state_dict()["param_groups"])
print(sorted(opt.state_dict()["state"][0].keys()))
print(F.interpolate(torch.arange(4.0).view(1, 1, 2, 2), scale_factor=2, mode="nearest"))
print(F.interpolate(torch.arange(4.0).view(1, 1, 2, 2), size=(3, 3), mode="bilinear", align_corners=True))
print(F.pixel_shuffle(torch.arange(8.0).view(1, 4, 1, 2), 2))

# one least-squares problem, each optimizer from the same start
torch.manual_seed(1)
a = torch.randn(16, 3)
b = a @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
for name, kwargs in [("Adagrad", {"lr": 0.5}), ("Adamax", {"lr": 0.1}), ("RAdam", {"lr": 0.1}),
                     ("Adadelta", {"lr": 1.0}), ("Rprop", {}), ("ASGD", {"lr": 0.05}),
                     ("RMSprop", {"lr": 0.01}), ("NAdam", {"lr": 0.05}), ("SGD", {"lr": 0.05, "nesterov": True,
                                                                                   "momentum": 0.9})]:
    torch.manual_seed(2)
    model = nn.Linear(3, 1)
    opt = getattr(torch.optim, name)(model.parameters(), **kwargs)
    for _ in range(25):
        opt.zero_grad()
        loss = F.mse_loss(model(a), b)
        loss.backward()
        opt.step()
    print(f"{name:9s} loss {loss.item():.5f} state {sorted(opt.state[model.weight].keys())}")
print(torch.optim.Adagrad([nn.Parameter(torch.ones(1))], lr_decay=0.01))
try:
    torch.optim.Rprop([nn.Parameter(torch.ones(1))], etas=(1.5, 2.0))
except ValueError as e:
    print("ValueError:", e)
