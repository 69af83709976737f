# A spatial transformer: a localisation net predicts affine theta (initialised to the identity), affine_grid and
# grid_sample warp the input, a small classifier follows; trained a few steps with Adam. Also the warnings of the
# default align_corners.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), nn.ReLU(True), nn.Flatten(),
                                 nn.Linear(4 * 3 * 3, 6))
        with torch.no_grad():
            self.loc[-1].weight.zero_()
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64, 3))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return self.head(F.grid_sample(x, grid, align_corners=False)), theta


torch.manual_seed(0)
net = STN()
x = torch.randn(5, 1, 8, 8)
y = torch.tensor([0, 1, 2, 1, 0])
opt = torch.optim.Adam(net.parameters(), lr=0.01)
for step in range(4):
    opt.zero_grad()
    logits, theta = net(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} theta00 {theta[0, 0, 0].item():.4f}")
identity = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
img = torch.arange(12.0).view(1, 1, 3, 4)
print(F.grid_sample(img, F.affine_grid(identity, img.shape, align_corners=True), align_corners=True))
shift = torch.tensor([[[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]]])
print(F.grid_sample(img, F.affine_grid(shift, img.shape), padding_mode="border"))
print(F.grid_sample(img, F.affine_grid(shift, img.shape, align_corners=False), mode="nearest", align_corners=False))
