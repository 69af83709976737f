# Sequence and statistics code with ties and NaN: sequence lengths sorted for packing (many equal lengths, as
# 1.13's sort orders them), running maxima, log-cumulative-sums, medians and modes of repeated values, masks with
# -inf before a softmax, and NaN-aware statistics.
import tinyddp as torch

lengths = torch.tensor([5, 3, 5, 2, 3, 5, 1, 3, 2, 5, 4, 3, 5, 2, 1, 3, 4, 5, 2, 3, 5, 1])
order = lengths.argsort(descending=True)
print("order", order.tolist())
print("sorted", lengths[order].tolist())
vals, idx = torch.sort(lengths)
print("ascending idx", idx.tolist())
print("stable", torch.sort(lengths, stable=True).indices.tolist())
print("top5", lengths.topk(5))
print("kth", lengths.kthvalue(7), "median", lengths.median(), lengths.median(0))
print("mode", lengths.mode())
print("unique", lengths.unique(return_counts=True))

scores = torch.tensor([0.1, 0.7, 0.3, 0.7, 0.9, 0.2, 0.9])
print("running best", scores.cummax(0))
print("running worst", scores.cummin(0))
print("logcumsumexp", scores.logcumsumexp(0))
print("cumsum", scores.cumsum(0), "cumprod", scores.cumprod(0))

logits = torch.tensor([[1.0, 2.0, 0.5, -1.0], [0.0, 0.0, 0.0, 0.0]])
mask = torch.tensor([[True, True, False, False], [False, False, False, False]])
masked = logits.masked_fill(~mask, float("-inf"))
print("masked", masked)
print("softmax", masked.softmax(-1))
print("clean", torch.nan_to_num(masked.softmax(-1)))
print("max with floor", torch.maximum(masked, torch.tensor(-5.0)))
print("where", torch.where(mask, logits, 0.0), torch.where(mask))

readings = torch.tensor([[1.0, float("nan"), 3.0], [2.0, 2.0, float("nan")], [float("nan"), float("nan"), 0.5]])
print("max", readings.max(), readings.max(1), readings.argmax(1))
print("nanmedian", readings.nanmedian(), readings.nanmedian(1))
print("median", readings.median(1))
print("nansum", readings.nansum(1), "nanmean", readings.nanmean(0))
print("sorted", readings.sort(1))
clean = readings.nan_to_num(0.0)
print("std", clean.std(1), clean.std(1, unbiased=False), clean.var(0, keepdim=True))
