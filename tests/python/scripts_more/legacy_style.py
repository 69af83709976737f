# A pre-1.0-style script still run on 1.13: Variable wrappers (volatile for evaluation), torch.FloatTensor /
# LongTensor constructors, x.new(...), .data arithmetic for manual SGD, the deprecated loss arguments
# (size_average), F.sigmoid / F.tanh, torch.range, clip_grad_norm without the underscore, loss.data.item().
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.autograd import Variable

torch.manual_seed(4)
X = torch.FloatTensor(32, 3).normal_()
true_w = torch.FloatTensor([[1.5], [-2.0], [0.5]])
Y = (X.mm(true_w) > 0).float()
labels = torch.LongTensor(Y.view(-1).long().tolist())
print(X.type(), labels.type(), X.new(2, 2).type(), X.new([1, 2]).dtype)

w1 = Variable(torch.randn(3, 8) * 0.5, requires_grad=True)
b1 = Variable(torch.zeros(8), requires_grad=True)
w2 = Variable(torch.randn(8, 1) * 0.5, requires_grad=True)
criterion = nn.BCELoss(size_average=True)
for it in range(25):
    x, y = Variable(X), Variable(Y)
    h = F.tanh(x.mm(w1) + b1)
    prob = F.sigmoid(h.mm(w2))
    loss = criterion(prob, y)
    for p in (w1, b1, w2):
        if p.grad is not None:
            p.grad.data.zero_()
    loss.backward()
    nn.utils.clip_grad_norm([w1, b1, w2], 5.0)
    for p in (w1, b1, w2):
        p.data.add_(-0.5 * p.grad.data)
    if it % 8 == 0:
        print("iter %d loss %.4f" % (it, loss.data.item()))

test = Variable(X[:6], volatile=True)
pred = F.sigmoid(F.tanh(test.mm(w1) + b1).mm(w2)).data
print(pred.view(-1).gt(0.5).long().tolist(), labels[:6].tolist())
print(torch.range(1, 4), torch.range(0, 1, 0.5).tolist())
mse = nn.MSELoss(reduce=False)
print(mse(torch.ones(2), torch.zeros(2)), nn.MSELoss(size_average=False)(torch.ones(3), torch.zeros(3)))
