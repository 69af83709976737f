# Old scripts' constructors: torch.Tensor(...), the typed classes (FloatTensor, LongTensor, ...), isinstance and
# .type() with them, torch.tensor(floats, dtype=long) truncating; shapes only where the values are uninitialized.
import tinyddp as torch

print(torch.Tensor(2, 3).shape, torch.Tensor([1, 2]), torch.Tensor((2, 3)), torch.Tensor(torch.Size([2])).shape)
print(torch.Tensor().shape, torch.LongTensor([1.7, 2]), torch.FloatTensor(2).dtype)
print(isinstance(torch.ones(1), torch.FloatTensor), isinstance(torch.ones(1).long(), torch.FloatTensor),
      torch.FloatTensor)
for make in [lambda: torch.Tensor(2.5), lambda: torch.Tensor("a"), lambda: torch.Tensor(2, "a"),
             lambda: torch.FloatTensor(torch.ones(2).long()), lambda: torch.Tensor(2, device="cuda"),
             lambda: torch.Tensor([1, 2], requires_grad=True)]:
    try:
        print(make())
    except Exception as e:
        print(type(e).__name__, str(e).split("\n")[0])
print(torch.Tensor(torch.ones(2, dtype=torch.float64)), torch.Tensor(torch.ones(2, dtype=torch.int64)))
print(torch.BoolTensor([1, 0]), torch.DoubleTensor(1, 2).shape, torch.ones(2).type(torch.LongTensor))
print(torch.Tensor([[1, 2]]).dtype, torch.LongTensor(torch.ones(2).long()), torch.Tensor([]).shape)
print(torch.tensor([1.7, -2.5, 3], dtype=torch.long), torch.tensor([0.0, 2.5], dtype=torch.bool))
