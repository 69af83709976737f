# A GAN-style loop: two optimizers, detach() for the discriminator step, BCEWithLogitsLoss.
import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(3)
G = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-2, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-2, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
real = torch.randn(16, 2) * 0.5 + 2.0
for step in range(4):
    z = torch.randn(16, 2)
    fake = G(z)
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake.detach()), torch.zeros(16, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(16, 1))
    g_loss.backward()
    opt_g.step()
    print(f"step {step} d {d_loss.item():.5f} g {g_loss.item():.5f}")
print(fake.requires_grad, fake.detach().requires_grad, fake.detach().grad_fn)
p = torch.sigmoid(D(real)).mean()
print(f"{p.item():.5f}")
print(f"{nn.BCELoss()(torch.sigmoid(D(real)), torch.ones(16, 1)).item():.5f}")
