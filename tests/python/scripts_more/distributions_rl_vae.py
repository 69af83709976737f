# torch.distributions as RL and VAE scripts use it: a REINFORCE policy over a contextual bandit with Categorical
# (sample, log_prob, entropy bonus), a Gaussian policy with Normal and Independent, a tiny VAE with the
# reparameterised Normal.rsample and kl_divergence against the standard normal prior, Bernoulli likelihoods,
# Uniform exploration noise, the distributions' reprs and shapes, and the validation errors.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.distributions import Bernoulli, Categorical, Independent, Normal, Uniform, kl_divergence

torch.manual_seed(0)
n_ctx, n_arms = 3, 4
true_means = torch.tensor([[0.1, 0.9, 0.3, 0.2], [0.8, 0.1, 0.1, 0.4], [0.2, 0.3, 0.2, 0.95]])
policy = nn.Sequential(nn.Linear(n_ctx, 16), nn.Tanh(), nn.Linear(16, n_arms))
opt = torch.optim.Adam(policy.parameters(), lr=0.05)
baseline = 0.0
for step in range(40):
    ctx = torch.randint(0, n_ctx, (32,))
    dist = Categorical(logits=policy(F.one_hot(ctx, n_ctx).float()))
    actions = dist.sample()
    rewards = torch.bernoulli(true_means[ctx, actions])
    advantage = rewards - baseline
    loss = -(dist.log_prob(actions) * advantage).mean() - 0.01 * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    baseline = 0.9 * baseline + 0.1 * rewards.mean().item()
    if step % 10 == 0:
        print(f"step {step}: reward {rewards.mean().item():.4f} entropy {dist.entropy().mean().item():.4f}")
with torch.no_grad():
    final = Categorical(logits=policy(torch.eye(n_ctx)))
print("greedy arms:", final.probs.argmax(-1).tolist(), "mode:", final.mode.tolist())
print("probs:", final.probs)
print(final, final.batch_shape, final.event_shape, final.sample((2,)).shape)

torch.manual_seed(1)
mu_net = nn.Linear(2, 2)
log_std = nn.Parameter(torch.zeros(2))
state = torch.randn(5, 2)
pi = Independent(Normal(mu_net(state), log_std.exp()), 1)
act = pi.rsample()
print(pi, pi.batch_shape, pi.event_shape, tuple(act.shape))
lp = pi.log_prob(act.detach())
print("gaussian log_prob:", lp.detach(), "entropy:", pi.entropy().detach())
(-lp.mean()).backward()
print("log_std grad:", log_std.grad)
noise = Uniform(-0.1, 0.1).sample((3,))
print("uniform noise:", noise, Uniform(-0.1, 0.1))

torch.manual_seed(2)
data = (torch.rand(64, 6) > 0.5).float()
enc = nn.Linear(6, 4)
dec = nn.Linear(2, 6)
vopt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=0.05)
prior = Normal(torch.zeros(2), torch.ones(2))
for epoch in range(20):
    h = enc(data)
    q = Normal(h[:, :2], F.softplus(h[:, 2:]) + 1e-4)
    z = q.rsample()
    recon = Bernoulli(logits=dec(z)).log_prob(data).sum(-1)
    kl = kl_divergence(q, prior).sum(-1)
    elbo = (recon - kl).mean()
    vopt.zero_grad()
    (-elbo).backward()
    vopt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch}: elbo {elbo.item():.4f} kl {kl.mean().item():.4f}")
print("z grad_fn:", z.grad_fn.name(), "kl:", kl_divergence(Normal(0.5, 2.0), Normal(0.0, 1.0)))
b = Bernoulli(probs=torch.tensor([0.2, 0.7]))
print(b, b.mean, b.variance, b.entropy(), b.sample((3,)))
print(kl_divergence(b, Bernoulli(probs=torch.tensor([0.5, 0.5]))))
print(kl_divergence(Categorical(probs=torch.tensor([0.5, 0.5, 0.0])), Categorical(logits=torch.zeros(3))))
n = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
print(n, n.log_prob(torch.tensor([0.5, 0.5])), n.cdf(torch.tensor([0.0, 1.5])), n.entropy(), n.stddev)
print(n.sample(), n.sample((2,)).shape, n.expand((3, 2)).batch_shape)

for make in (lambda: Normal(0.0, 0.0), lambda: Categorical(probs=torch.tensor([0.3, -0.1])),
             lambda: Categorical(logits=torch.zeros(3)).log_prob(torch.tensor([3])),
             lambda: Bernoulli(probs=torch.tensor([0.5])).log_prob(torch.tensor([2.0])),
             lambda: Normal(torch.zeros(3), 1.0).log_prob(torch.zeros(4)), lambda: Uniform(2.0, 1.0),
             lambda: Categorical(probs=torch.tensor([0.5]), logits=torch.tensor([0.0])),
             lambda: kl_divergence(Normal(0.0, 1.0), Bernoulli(0.5))):
    try:
        make()
        print("no error")
    except (ValueError, NotImplementedError) as e:
        print(type(e).__name__ + ":", e)
