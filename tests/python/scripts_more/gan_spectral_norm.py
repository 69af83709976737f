# An SNGAN-style training loop on 2-D points: a discriminator whose Linear layers carry nn.utils.spectral_norm
# (weight_orig, the u / v buffers updated by power iteration in training mode only, the normalised weight's
# largest singular value near 1), the hinge loss, Adam with betas (0.0, 0.9) for both nets, a generator sampling
# latent noise, the state_dict's keys, eval-mode forwards that leave u untouched, and remove_spectral_norm.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.utils import remove_spectral_norm, spectral_norm

torch.manual_seed(0)
real = torch.randn(256, 2) * 0.3 + torch.tensor([2.0, -1.0])
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(spectral_norm(nn.Linear(2, 16)), nn.LeakyReLU(0.2), spectral_norm(nn.Linear(16, 16)),
                  nn.LeakyReLU(0.2), spectral_norm(nn.Linear(16, 1)))
print(D)
print("D params:", [n for n, _ in D.named_parameters()])
print("D buffers:", [(n, tuple(b.shape)) for n, b in D.named_buffers()])
print("state_dict:", list(D.state_dict().keys())[:4])
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.9))


def top_singular_value(w, iters=50):
    v = torch.ones(w.shape[1])
    for _ in range(iters):
        v = F.normalize(w.t() @ F.normalize(w @ v, dim=0), dim=0)
    return (w @ v).norm().item()


for step in range(30):
    idx = torch.randint(0, real.shape[0], (32,))
    z = torch.randn(32, 4)
    fake = G(z)
    d_loss = F.relu(1 - D(real[idx])).mean() + F.relu(1 + D(fake.detach())).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = -D(G(torch.randn(32, 4))).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    if step % 10 == 0:
        print(f"step {step}: d {d_loss.item():.4f} g {g_loss.item():.4f}")

w = D[0].weight.detach()
print("sigma of normalised weight: %.3f" % top_singular_value(w), "raw: %.3f" % top_singular_value(D[0].weight_orig.detach()))
print("u:", D[2].weight_u[:4])
D.eval()
u_before = D[0].weight_u.clone()
with torch.no_grad():
    scores = D(torch.cat([real[:3], G(torch.randn(3, 4))]))
print("scores:", scores.squeeze(1))
print("eval leaves u:", torch.equal(u_before, D[0].weight_u))
D.train()
D(real[:2])
print("train updates u:", not torch.equal(u_before, D[0].weight_u))
print("fake mean:", G(torch.randn(500, 4)).mean(0).detach())
remove_spectral_norm(D[4])
print("after remove:", [n for n, _ in D[4].named_parameters()], [n for n, _ in D[4].named_buffers()])
for bad in (lambda: remove_spectral_norm(D[4]), lambda: spectral_norm(D[0]),
            lambda: spectral_norm(nn.Linear(2, 2), n_power_iterations=0)):
    try:
        bad()
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__ + ":", e)
