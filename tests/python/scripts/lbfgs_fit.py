# LBFGS with a closure: a least-squares fit with the fixed step and the Rosenbrock function with the strong Wolfe
# line search, printing the losses, the state's counters and the optimizer's repr.
import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(0)
a = torch.randn(20, 3)
b = a @ torch.tensor([[0.5], [-1.0], [2.0]]) - 0.3
model = nn.Linear(3, 1)
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=10, history_size=5)
print(opt)


def closure():
    opt.zero_grad()
    loss = ((model(a) - b) ** 2).mean()
    loss.backward()
    return loss


for step in range(3):
    loss = opt.step(closure)
    print(f"step {step} loss {loss.item():.5f}")
state = opt.state[model.weight]
print(state["func_evals"], state["n_iter"], len(state["old_dirs"]), f"{float(state['t']):.4f}")
print(model.weight.detach(), model.bias.detach())

xy = nn.Parameter(torch.tensor([-1.5, 2.0]))
opt = torch.optim.LBFGS([xy], line_search_fn="strong_wolfe", max_iter=50)


def rosenbrock():
    opt.zero_grad()
    loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
    loss.backward()
    return loss


for step in range(4):
    loss = opt.step(rosenbrock)
    print(f"rosenbrock {step} loss {loss.item():.6f} at {[round(v, 4) for v in xy.tolist()]}")
print(opt.state[xy]["func_evals"], opt.state[xy]["n_iter"])
try:
    torch.optim.LBFGS([{"params": [xy]}, {"params": [nn.Parameter(torch.ones(1))]}])
except ValueError as e:
    print("ValueError:", e)
