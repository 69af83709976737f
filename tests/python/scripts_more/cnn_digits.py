# A small CNN on synthetic 1x12x12 "digits" (a bar at a class-dependent position), MNIST-tutorial style: Conv2d,
# BatchNorm2d, MaxPool2d, Dropout, Flatten, a Linear head, cudnn.benchmark set as tutorials do, a device branch,
# StepLR, training and test loops with running metrics, the model summary printed.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.utils.data import DataLoader, TensorDataset

torch.backends.cudnn.benchmark = True
use_cuda = torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}
torch.manual_seed(1)


def make_data(n):
    labels = torch.randint(0, 3, (n,))
    images = 0.3 * torch.randn(n, 1, 12, 12)
    for i, c in enumerate(labels.tolist()):
        images[i, 0, 2 + 3 * c: 4 + 3 * c, 2:10] += 1.0
    return images, labels


train_loader = DataLoader(TensorDataset(*make_data(96)), batch_size=16, shuffle=True, **kwargs)
test_loader = DataLoader(TensorDataset(*make_data(48)), batch_size=24, **kwargs)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout = nn.Dropout(0.25)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(8 * 4 * 4, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        x = self.dropout(x)
        return F.log_softmax(self.fc(self.flatten(x)), dim=1)


model = Net().to(device)
print(model)
print("parameters:", sum(p.numel() for p in model.parameters() if p.requires_grad))
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 3 == 0:
            print("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.4f}".format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test():
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print("Test set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)".format(
        test_loss, correct, len(test_loader.dataset), 100. * correct / len(test_loader.dataset)))


for epoch in range(1, 4):
    train(epoch)
    test()
    scheduler.step()
print(scheduler.get_last_lr(), torch.backends.cudnn.benchmark)
