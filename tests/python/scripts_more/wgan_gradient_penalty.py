# WGAN-GP's gradient penalty through a padded convolutional critic: the input gradient of a padded Conv2d or
# MaxPool2d is contiguous (so the penalty's grad.view(batch, -1) works) and differentiable again (create_graph);
# then re-initialising layers with reset_parameters(), as scripts do between runs, and a Linear whose bias is
# removed after construction.
import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.MaxPool2d(2, padding=1),
                       nn.Conv2d(4, 2, 3, padding=1), nn.Flatten(), nn.Linear(2 * 3 * 3, 1))
opt = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
for step in range(3):
    real, fake = torch.randn(3, 1, 4, 4), torch.randn(3, 1, 4, 4)
    alpha = torch.rand(3, 1, 1, 1)
    x = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(x)
    grad, = torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out), create_graph=True, retain_graph=True)
    penalty = ((grad.view(grad.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, grad.is_contiguous(), grad.stride(), f"{penalty.item():.6f} {loss.item():.6f}")

x = torch.randn(2, 1, 5, requires_grad=True)
g, = torch.autograd.grad(nn.functional.conv1d(x, torch.ones(1, 1, 3), padding=1).sum(), x)
print("conv1d", g.is_contiguous(), g.view(2, -1).shape)
g, = torch.autograd.grad(nn.functional.pad(x, (2, 1)).pow(2).sum(), x)
print("pad", g.is_contiguous(), g.view(-1).tolist() == (2 * x).view(-1).tolist())

torch.manual_seed(1)
for layer in critic.children():
    if hasattr(layer, "reset_parameters"):
        layer.reset_parameters()
print([type(m).__name__ for m in critic if hasattr(m, "reset_parameters")])
print(f"{critic[0].weight.sum().item():.6f} {critic[5].weight.sum().item():.6f} {critic[5].bias.item():.6f}")
emb = nn.Embedding(4, 2, padding_idx=1)
emb.reset_parameters()
print(emb.weight[1].tolist(), f"{emb.weight.sum().item():.6f}")
lin = nn.Linear(2, 2)
lin.bias = None
print(lin, lin(torch.ones(1, 2)).shape)
