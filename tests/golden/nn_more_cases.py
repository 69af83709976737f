"""The cases of nn_more.json, written once for both sides: gen_nn_more.py runs them on PyTorch 1.13 and records
what they give, tests/python/test_nn_more.py runs them on tinyddp and compares.

cases(torch) maps a name to a function of nothing that builds a layer under torch.manual_seed(0) (so its
parameters come from the seeded stream), runs it on inputs made here from a fixed LCG (no random stream), and
returns {"repr", "keys" (state_dict's), "params" (values at init), "out", "grads" (of sum(out * coeff) wrt each
input and parameter)}; a function-only case has repr and keys None. errors(torch) maps a name to a call that
must raise.
"""


def lcg(seed, n):
    out, x = [], seed
    for _ in range(n):
        x = (1103515245 * x + 12345) % 2 ** 31
        out.append(round(x / 2 ** 30 - 1.0, 6))
    return out


def cases(torch):
    nn, F = torch.nn, torch.nn.functional

    def data(seed, *shape, requires_grad=True, dtype=None):
        n = 1
        for s in shape:
            n *= s
        t = torch.tensor(lcg(seed, n), dtype=dtype or torch.float32).reshape(shape)
        return t.requires_grad_(requires_grad)

    def flat(t):
        return t.detach().reshape(-1).tolist()

    def run(make, *inputs, fn=None, train=True, seed=0):
        torch.manual_seed(seed)
        m = make() if make is not None else None
        if m is not None and not train:
            m.eval()
        torch.manual_seed(1)   # the stream a training-mode forward draws from (dropout)
        out = m(*inputs) if m is not None else fn(*inputs)
        coeff = torch.tensor(lcg(99, out.numel())).reshape(out.shape)
        params = list(m.named_parameters()) if m is not None else []
        differentiable = [t for t in inputs if torch.is_tensor(t) and t.requires_grad] + [p for _, p in params]
        grads = []
        if out.requires_grad and differentiable:
            gs = torch.autograd.grad((out * coeff).sum(), differentiable, allow_unused=True)
            grads = [None if g is None else flat(g) for g in gs]
        return {"repr": repr(m) if m is not None else None,
                "keys": list(m.state_dict().keys()) if m is not None else None,
                "buffers": {k: flat(v) for k, v in m.state_dict().items() if k not in dict(params)}
                if m is not None else None,
                "params": {k: flat(p) for k, p in params},
                "shape": list(out.shape), "out": flat(out), "grads": grads}

    x1d = lambda: data(1, 2, 3, 10)      # (N, C, L)
    x2d = lambda: data(2, 2, 4, 6, 7)    # (N, C, H, W)
    C = {
        # convolutions: init from the seeded stream, groups, padding modes and strings
        "conv1d": lambda: run(lambda: nn.Conv1d(3, 5, 3), x1d()),
        "conv1d-stride-pad-dilation": lambda: run(lambda: nn.Conv1d(3, 4, 3, stride=2, padding=2, dilation=2), x1d()),
        "conv1d-groups-nobias": lambda: run(lambda: nn.Conv1d(3, 6, 2, groups=3, bias=False), x1d()),
        "conv1d-same-reflect": lambda: run(lambda: nn.Conv1d(3, 2, 4, padding="same", padding_mode="reflect"), x1d()),
        "conv1d-unbatched": lambda: run(lambda: nn.Conv1d(3, 2, 3, padding=1), data(3, 3, 8)),
        "conv2d-groups": lambda: run(lambda: nn.Conv2d(4, 6, 3, groups=2, padding=1), x2d()),
        "conv2d-depthwise-circular": lambda: run(lambda: nn.Conv2d(4, 4, 3, groups=4, padding=1,
                                                                   padding_mode="circular"), x2d()),
        "conv2d-replicate-same": lambda: run(lambda: nn.Conv2d(4, 3, (2, 3), padding="same",
                                                               padding_mode="replicate"), x2d()),
        "conv2d-valid": lambda: run(lambda: nn.Conv2d(4, 3, 3, padding="valid", dilation=(1, 2)), x2d()),
        "f-conv1d": lambda: run(None, x1d(), data(4, 2, 3, 3), data(5, 2), fn=lambda x, w, b: F.conv1d(x, w, b, padding=1)),
        # pooling
        "maxpool1d": lambda: run(lambda: nn.MaxPool1d(3, stride=2, padding=1), x1d()),
        "avgpool1d": lambda: run(lambda: nn.AvgPool1d(2), x1d()),
        "adaptive-avg-2d": lambda: run(lambda: nn.AdaptiveAvgPool2d((4, 3)), x2d()),
        "adaptive-avg-2d-1": lambda: run(lambda: nn.AdaptiveAvgPool2d(1), x2d()),
        "adaptive-avg-2d-none": lambda: run(lambda: nn.AdaptiveAvgPool2d((None, 2)), x2d()),
        "adaptive-avg-1d": lambda: run(lambda: nn.AdaptiveAvgPool1d(4), x1d()),
        "adaptive-max-2d": lambda: run(lambda: nn.AdaptiveMaxPool2d((3, 5)), x2d()),
        "adaptive-max-1d": lambda: run(lambda: nn.AdaptiveMaxPool1d(3), x1d()),
        # normalization
        "groupnorm": lambda: run(lambda: nn.GroupNorm(2, 4), x2d()),
        "groupnorm-noaffine-1d": lambda: run(lambda: nn.GroupNorm(3, 3, eps=1e-3, affine=False), x1d()),
        "instancenorm1d": lambda: run(lambda: nn.InstanceNorm1d(3), x1d()),
        "instancenorm2d-affine-stats": lambda: run(lambda: nn.InstanceNorm2d(4, affine=True, track_running_stats=True),
                                                   x2d()),
        "instancenorm2d-eval-stats": lambda: run(lambda: nn.InstanceNorm2d(4, track_running_stats=True), x2d(),
                                                 train=False),
        # dropout: the mask from the seeded stream
        "dropout2d": lambda: run(lambda: nn.Dropout2d(0.5), x2d()),
        "dropout1d": lambda: run(lambda: nn.Dropout1d(0.3), x1d()),
        "dropout2d-eval": lambda: run(lambda: nn.Dropout2d(0.5), x2d(), train=False),
        # activations
        "prelu": lambda: run(lambda: nn.PReLU(), x2d()),
        "prelu-channels": lambda: run(lambda: nn.PReLU(4, init=0.1), x2d()),
        "hardswish": lambda: run(lambda: nn.Hardswish(), data(6, 40) * 4),
        "hardsigmoid": lambda: run(lambda: nn.Hardsigmoid(), data(6, 40) * 4),
        "glu": lambda: run(lambda: nn.GLU(), data(7, 3, 8)),
        "glu-dim1": lambda: run(lambda: nn.GLU(1), data(7, 3, 4)),
        "celu": lambda: run(lambda: nn.CELU(0.5), data(8, 20) * 3),
        "softshrink": lambda: run(lambda: nn.Softshrink(0.3), data(8, 20)),
        "hardshrink": lambda: run(lambda: nn.Hardshrink(), data(8, 20)),
        "tanhshrink": lambda: run(lambda: nn.Tanhshrink(), data(8, 20)),
        "threshold": lambda: run(lambda: nn.Threshold(0.1, 20.0), data(8, 20)),
        "silu": lambda: run(lambda: nn.SiLU(), data(8, 20)),
        "mish": lambda: run(lambda: nn.Mish(), data(8, 20)),
        # padding
        "zeropad2d": lambda: run(lambda: nn.ZeroPad2d((1, 2, 0, 1)), x2d()),
        "constantpad1d": lambda: run(lambda: nn.ConstantPad1d(2, 3.5), x1d()),
        "constantpad2d": lambda: run(lambda: nn.ConstantPad2d((1, 0, 2, 0), 1), x2d()),
        "reflectionpad1d": lambda: run(lambda: nn.ReflectionPad1d((3, 1)), x1d()),
        "reflectionpad2d": lambda: run(lambda: nn.ReflectionPad2d(2), x2d()),
        "replicationpad2d": lambda: run(lambda: nn.ReplicationPad2d((1, 3, 2, 0)), x2d()),
        "f-pad-circular": lambda: run(None, x2d(), fn=lambda x: F.pad(x, (2, 1, 1, 3), mode="circular")),
        "f-pad-reflect-crop": lambda: run(None, x2d(), fn=lambda x: F.pad(x, (-1, 2, 1, -2), mode="reflect")),
        # resampling
        "upsample-nearest-2x": lambda: run(lambda: nn.Upsample(scale_factor=2), x2d()),
        "upsample-nearest-size": lambda: run(lambda: nn.Upsample(size=(9, 5)), x2d()),
        "upsample-nearest-1.7": lambda: run(lambda: nn.Upsample(scale_factor=1.7), x2d()),
        "upsample-bilinear": lambda: run(lambda: nn.Upsample(scale_factor=2, mode="bilinear"), x2d()),
        "upsample-bilinear-align": lambda: run(lambda: nn.Upsample(size=(5, 11), mode="bilinear", align_corners=True),
                                               x2d()),
        "upsample-bilinear-down": lambda: run(lambda: nn.Upsample(size=(4, 3), mode="bilinear"), x2d()),
        "interpolate-linear": lambda: run(None, x1d(), fn=lambda x: F.interpolate(x, scale_factor=1.5, mode="linear")),
        "interpolate-nearest-1d": lambda: run(None, x1d(), fn=lambda x: F.interpolate(x, size=7)),
        "upsampling-bilinear2d": lambda: run(lambda: nn.UpsamplingBilinear2d(scale_factor=2), x2d()),
        "pixelshuffle": lambda: run(lambda: nn.PixelShuffle(2), data(9, 2, 8, 3, 2)),
        "pixelunshuffle": lambda: run(lambda: nn.PixelUnshuffle(2), data(9, 2, 2, 4, 6)),
        # distances, losses, bilinear
        "pairwise-distance": lambda: run(lambda: nn.PairwiseDistance(), data(10, 4, 5), data(11, 4, 5)),
        "pairwise-distance-p1-keepdim": lambda: run(lambda: nn.PairwiseDistance(p=1.0, keepdim=True),
                                                    data(10, 4, 5), data(11, 4, 5)),
        "cosine-embedding": lambda: run(lambda: nn.CosineEmbeddingLoss(margin=0.2), data(12, 6, 5), data(13, 6, 5),
                                        torch.tensor([1, -1, 1, -1, -1, 1])),
        "cosine-embedding-none": lambda: run(lambda: nn.CosineEmbeddingLoss(reduction="none"), data(12, 6, 5),
                                             data(13, 6, 5), torch.tensor([1, -1, 1, -1, -1, 1])),
        "margin-ranking": lambda: run(lambda: nn.MarginRankingLoss(margin=0.1), data(14, 8), data(15, 8),
                                      torch.tensor([1., -1., 1., 1., -1., -1., 1., -1.])),
        "triplet-margin": lambda: run(lambda: nn.TripletMarginLoss(margin=0.5), data(16, 5, 4), data(17, 5, 4),
                                      data(18, 5, 4)),
        "triplet-margin-swap-sum": lambda: run(lambda: nn.TripletMarginLoss(swap=True, p=1, reduction="sum"),
                                               data(16, 5, 4), data(17, 5, 4), data(18, 5, 4)),
        "hinge-embedding": lambda: run(lambda: nn.HingeEmbeddingLoss(), data(19, 6),
                                       torch.tensor([1., -1., -1., 1., -1., 1.])),
        "soft-margin": lambda: run(lambda: nn.SoftMarginLoss(), data(19, 6), torch.tensor([1., -1., -1., 1., -1., 1.])),
        "bilinear": lambda: run(lambda: nn.Bilinear(3, 4, 5), data(20, 6, 3), data(21, 6, 4)),
        "bilinear-nobias": lambda: run(lambda: nn.Bilinear(2, 3, 2, bias=False), data(20, 4, 2), data(21, 4, 3)),
        # the reductions and options of the common losses
        "mse-sum": lambda: run(lambda: nn.MSELoss(reduction="sum"), data(22, 4, 3), data(23, 4, 3, requires_grad=False)),
        "mse-none": lambda: run(lambda: nn.MSELoss(reduction="none"), data(22, 4, 3), data(23, 4, 3, requires_grad=False)),
        "l1-sum": lambda: run(lambda: nn.L1Loss(reduction="sum"), data(22, 4, 3), data(23, 4, 3, requires_grad=False)),
        "ce-none": lambda: run(lambda: nn.CrossEntropyLoss(reduction="none"), data(24, 5, 4), torch.tensor([0, 3, 1, 2, 3])),
        "ce-sum": lambda: run(lambda: nn.CrossEntropyLoss(reduction="sum"), data(24, 5, 4), torch.tensor([0, 3, 1, 2, 3])),
        "ce-weight": lambda: run(lambda: nn.CrossEntropyLoss(weight=torch.tensor([1., 2., 0.5, 3.])), data(24, 5, 4),
                                 torch.tensor([0, 3, 1, 2, 3])),
        "ce-ignore-index": lambda: run(lambda: nn.CrossEntropyLoss(ignore_index=1), data(24, 5, 4),
                                       torch.tensor([0, 1, 1, 2, 3])),
        "ce-label-smoothing": lambda: run(lambda: nn.CrossEntropyLoss(label_smoothing=0.1), data(24, 5, 4),
                                          torch.tensor([0, 3, 1, 2, 3])),
        "ce-weight-smoothing-ignore": lambda: run(lambda: nn.CrossEntropyLoss(weight=torch.tensor([1., 2., 0.5, 3.]),
                                                                              label_smoothing=0.2, ignore_index=2),
                                                  data(24, 5, 4), torch.tensor([0, 2, 1, 2, 3])),
        "ce-probabilities": lambda: run(lambda: nn.CrossEntropyLoss(), data(24, 5, 4),
                                        torch.softmax(data(25, 5, 4, requires_grad=False), 1)),
        "ce-4d": lambda: run(lambda: nn.CrossEntropyLoss(), data(26, 2, 3, 2, 2),
                             torch.tensor([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])),
        "nll-weight-none": lambda: run(lambda: nn.NLLLoss(weight=torch.tensor([0.2, 1., 2.]), reduction="none"),
                                       data(27, 4, 3), torch.tensor([2, 0, 1, 2])),
        "unfold": lambda: run(lambda: nn.Unfold(2, padding=1, stride=2), x2d()),
        "fold": lambda: run(lambda: nn.Fold((4, 5), 2), data(28, 2, 8, 12)),
        "pixel-unshuffle-f": lambda: run(None, data(9, 1, 2, 4, 4), fn=lambda x: F.pixel_unshuffle(x, 2)),
        "group-norm-f": lambda: run(None, x2d(), data(29, 4), data(30, 4), fn=lambda x, w, b: F.group_norm(x, 4, w, b)),
        "glu-f": lambda: run(None, data(7, 4, 3), fn=lambda x: F.glu(x, 0)),
        # transposed convolutions
        "convtranspose2d": lambda: run(lambda: nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1), x2d()),
        "convtranspose2d-groups-outpad": lambda: run(lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                                                output_padding=1, groups=2,
                                                                                bias=False), x2d()),
        "convtranspose2d-dilation": lambda: run(lambda: nn.ConvTranspose2d(4, 2, (2, 3), dilation=2), x2d()),
        "convtranspose2d-output-size": lambda: run(lambda: _OutputSize(nn.ConvTranspose2d(4, 2, 3, stride=2)), x2d()),
        "convtranspose1d": lambda: run(lambda: nn.ConvTranspose1d(3, 2, 3, stride=3, padding=1), x1d()),
        "f-conv-transpose2d-unbatched": lambda: run(None, data(31, 2, 3, 3), data(32, 2, 2, 2, 2),
                                                    fn=lambda x, w: F.conv_transpose2d(x, w, stride=2)),
        # pooling's options
        "maxpool2d-ceil": lambda: run(lambda: nn.MaxPool2d(2, ceil_mode=True), x2d()),
        "maxpool2d-ceil-pad-stride": lambda: run(lambda: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), x2d()),
        "maxpool2d-indices": lambda: run(None, x2d(), fn=lambda x: F.max_pool2d(x, 2, padding=1,
                                                                               return_indices=True)[0]),
        "maxpool2d-indices-values": lambda: run(None, data(2, 2, 4, 6, 7, requires_grad=False),
                                                fn=lambda x: F.max_pool2d(x, 3, 2, 1, 1, True, True)[1].float()),
        "maxpool1d-indices": lambda: run(None, data(1, 2, 3, 10, requires_grad=False),
                                         fn=lambda x: F.max_pool1d(x, 3, 2, return_indices=True)[1].float()),
        "avgpool2d-ceil": lambda: run(lambda: nn.AvgPool2d(2, ceil_mode=True), x2d()),
        "avgpool2d-exclude-pad": lambda: run(lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                                             x2d()),
        "avgpool2d-ceil-include-pad": lambda: run(lambda: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True), x2d()),
        "avgpool2d-ceil-exclude-pad": lambda: run(lambda: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                                       count_include_pad=False), x2d()),
        "avgpool2d-divisor": lambda: run(lambda: nn.AvgPool2d(2, divisor_override=3), x2d()),
        # more layers and losses
        "local-response-norm": lambda: run(lambda: nn.LocalResponseNorm(3, alpha=0.1, beta=0.5, k=2.0), x2d()),
        "local-response-norm-even": lambda: run(lambda: nn.LocalResponseNorm(2), x1d()),
        "lppool2d": lambda: run(lambda: nn.LPPool2d(2, 2), x2d() * 0 + x2d().abs() + 0.1),
        "lppool1d-p3": lambda: run(lambda: nn.LPPool1d(3, 3, stride=2), x1d().abs() + 0.1),
        "channel-shuffle": lambda: run(lambda: nn.ChannelShuffle(2), data(2, 2, 4, 6, 7, requires_grad=False)),
        "softmax2d": lambda: run(lambda: nn.Softmax2d(), x2d()),
        "adaptive-avg-3d": lambda: run(lambda: nn.AdaptiveAvgPool3d((2, 3, 2)), data(34, 1, 2, 4, 6, 5)),
        "pdist": lambda: run(None, data(35, 5, 3), fn=lambda x: F.pdist(x)),
        "pdist-p1": lambda: run(None, data(35, 5, 3), fn=lambda x: F.pdist(x, 1)),
        "poisson-nll": lambda: run(lambda: nn.PoissonNLLLoss(), data(36, 4, 3), data(37, 4, 3, requires_grad=False).abs() * 3),
        "poisson-nll-full-nolog": lambda: run(lambda: nn.PoissonNLLLoss(log_input=False, full=True, reduction="sum"),
                                              data(36, 4, 3).abs() + 0.5, data(37, 4, 3, requires_grad=False).abs() * 3),
        "gaussian-nll": lambda: run(lambda: nn.GaussianNLLLoss(), data(38, 4, 3), data(39, 4, 3, requires_grad=False),
                                    data(40, 4, 3).abs() + 0.1),
        "gaussian-nll-full-var-per-row": lambda: run(lambda: nn.GaussianNLLLoss(full=True, reduction="none"),
                                                     data(38, 4, 3), data(39, 4, 3, requires_grad=False),
                                                     data(40, 4).abs()),
        "multilabel-soft-margin": lambda: run(lambda: nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1., 2., 0.5])),
                                              data(41, 4, 3), torch.tensor([[1., 0., 1.], [0., 0., 1.], [1., 1., 0.],
                                                                            [0., 1., 0.]])),
        "multi-margin": lambda: run(lambda: nn.MultiMarginLoss(), data(42, 4, 3), torch.tensor([0, 2, 1, 2])),
        "multi-margin-p2-weight": lambda: run(lambda: nn.MultiMarginLoss(p=2, margin=0.5,
                                                                         weight=torch.tensor([1., 2., 3.]),
                                                                         reduction="none"),
                                              data(42, 4, 3), torch.tensor([0, 2, 1, 2])),
        "triplet-with-distance": lambda: run(lambda: nn.TripletMarginWithDistanceLoss(
            distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b), margin=0.3, swap=True),
            data(16, 5, 4), data(17, 5, 4), data(18, 5, 4)),
        # gumbel_softmax: the noise from the seeded stream (1.13's exponential_)
        "gumbel-softmax": lambda: run(None, data(43, 4, 5), fn=lambda x: F.gumbel_softmax(x, tau=0.5)),
        "gumbel-softmax-hard-dim0": lambda: run(None, data(43, 4, 5), fn=lambda x: F.gumbel_softmax(x, hard=True, dim=0)),
        "interpolate-area": lambda: run(None, x2d(), fn=lambda x: F.interpolate(x, size=(4, 3), mode="area")),
        "interpolate-nearest-exact": lambda: run(None, x2d(), fn=lambda x: F.interpolate(x, scale_factor=1.6,
                                                                                       mode="nearest-exact")),
        "interpolate-nearest-exact-down": lambda: run(None, x2d(), fn=lambda x: F.interpolate(x, size=(4, 5),
                                                                                            mode="nearest-exact")),
        "batchnorm3d": lambda: run(lambda: nn.BatchNorm3d(2), data(44, 3, 2, 3, 2, 4)),
        # Embedding's options
        "embedding-padding-idx": lambda: run(lambda: nn.Embedding(6, 3, padding_idx=2),
                                             torch.tensor([[2, 0, 1], [5, 2, 2]])),
        "embedding-negative-padding-idx": lambda: run(lambda: nn.Embedding(6, 3, padding_idx=-1),
                                                      torch.tensor([[5, 0], [1, 5]])),
        "embedding-max-norm": lambda: run(lambda: nn.Embedding(6, 4, max_norm=1.5), torch.tensor([[1, 3, 1], [4, 0, 3]])),
        "embedding-scale-grad-by-freq": lambda: run(lambda: nn.Embedding(5, 2, scale_grad_by_freq=True),
                                                    torch.tensor([0, 3, 3, 1, 3, 0])),
        "embedding-from-pretrained": lambda: run(lambda: nn.Embedding.from_pretrained(
            torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), freeze=False, padding_idx=0), torch.tensor([0, 2, 1])),
        "embedding-bag-mean": lambda: run(lambda: nn.EmbeddingBag(8, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 7]),
                                          torch.tensor([0, 4, 4, 6])),
        "embedding-bag-sum-2d": lambda: run(lambda: nn.EmbeddingBag(8, 3, mode="sum"), torch.tensor([[1, 2], [4, 4]])),
        "embedding-bag-max": lambda: run(lambda: nn.EmbeddingBag(8, 3, mode="max"), torch.tensor([1, 2, 4, 5, 4, 3]),
                                         torch.tensor([0, 2])),
        "embedding-bag-weights-last-offset": lambda: run(lambda: nn.EmbeddingBag(8, 2, mode="sum",
                                                                                 include_last_offset=True),
                                                         torch.tensor([1, 2, 4, 5, 4]), torch.tensor([0, 2, 5]),
                                                         data(45, 5)),
        "embedding-bag-padding": lambda: run(lambda: nn.EmbeddingBag(8, 3, padding_idx=2),
                                             torch.tensor([2, 2, 1, 2, 5]), torch.tensor([0, 2])),
        # spatial transformers: affine_grid and grid_sample, gradients in theta and the input
        "affine-grid": lambda: run(None, data(46, 2, 2, 3), fn=lambda t: F.affine_grid(t, (2, 3, 4, 5),
                                                                                     align_corners=False)),
        "affine-grid-align": lambda: run(None, data(46, 2, 2, 3), fn=lambda t: F.affine_grid(t, [2, 3, 4, 2],
                                                                                           align_corners=True)),
        "grid-sample-bilinear": lambda: run(None, x2d(), data(47, 2, 3, 5, 2) * 1.2,
                                            fn=lambda x, g: F.grid_sample(x, g, align_corners=False)),
        "grid-sample-bilinear-align-border": lambda: run(None, x2d(), data(47, 2, 3, 5, 2) * 1.2,
                                                         fn=lambda x, g: F.grid_sample(x, g, padding_mode="border",
                                                                                       align_corners=True)),
        "grid-sample-reflection": lambda: run(None, x2d(), data(47, 2, 3, 5, 2) * 1.7,
                                              fn=lambda x, g: F.grid_sample(x, g, padding_mode="reflection",
                                                                            align_corners=False)),
        "grid-sample-reflection-align": lambda: run(None, x2d(), data(47, 2, 3, 5, 2) * 1.7,
                                                    fn=lambda x, g: F.grid_sample(x, g, padding_mode="reflection",
                                                                                  align_corners=True)),
        "grid-sample-nearest": lambda: run(None, x2d(), data(47, 2, 3, 5, 2, requires_grad=False) * 1.1,
                                           fn=lambda x, g: F.grid_sample(x, g, mode="nearest", align_corners=False)),
        "stn": lambda: run(None, x2d(), data(48, 2, 2, 3) * 0.5,
                           fn=lambda x, t: F.grid_sample(x, F.affine_grid(t, x.shape, align_corners=False),
                                                         align_corners=False)),
        # volumes
        "conv3d": lambda: run(lambda: nn.Conv3d(2, 3, 3, padding=1), data(49, 2, 2, 4, 5, 6)),
        "conv3d-stride-groups": lambda: run(lambda: nn.Conv3d(2, 4, (2, 3, 2), stride=(2, 1, 2), groups=2,
                                                              dilation=(1, 2, 1)), data(49, 2, 2, 4, 5, 6)),
        "conv3d-same-replicate": lambda: run(lambda: nn.Conv3d(2, 2, 2, padding="same", padding_mode="replicate"),
                                             data(49, 2, 2, 4, 5, 6)),
        "maxpool3d": lambda: run(lambda: nn.MaxPool3d(2, stride=(1, 2, 2), padding=1), data(50, 2, 2, 4, 5, 6)),
        "avgpool3d": lambda: run(lambda: nn.AvgPool3d((2, 3, 2), padding=(1, 1, 0)), data(50, 2, 2, 4, 5, 6)),
        "adaptive-max-3d": lambda: run(lambda: nn.AdaptiveMaxPool3d((2, 3, 4)), data(50, 2, 2, 4, 5, 6)),
        "dropout3d": lambda: run(lambda: nn.Dropout3d(0.4), data(50, 2, 3, 2, 2, 2)),
        "instancenorm3d": lambda: run(lambda: nn.InstanceNorm3d(2, affine=True), data(50, 2, 2, 4, 5, 6)),
        "reflectionpad3d": lambda: run(lambda: nn.ReflectionPad3d((1, 0, 2, 1, 1, 1)), data(50, 1, 2, 3, 4, 5)),
        "replicationpad3d": lambda: run(lambda: nn.ReplicationPad3d(1), data(50, 1, 2, 3, 4, 5)),
        "conv3d-unbatched": lambda: run(None, data(51, 2, 3, 4, 4), data(52, 1, 2, 2, 2, 2),
                                        fn=lambda x, w: F.conv3d(x, w, stride=2)),
        "interpolate-bicubic": lambda: run(None, x2d(), fn=lambda x: F.interpolate(x, scale_factor=2, mode="bicubic")),
        "interpolate-bicubic-align-down": lambda: run(None, x2d(), fn=lambda x: F.interpolate(
            x, size=(4, 9), mode="bicubic", align_corners=True)),
        "upsample-bicubic-1.5": lambda: run(lambda: nn.Upsample(scale_factor=1.5, mode="bicubic"), x2d()),
        "upsample-trilinear": lambda: run(lambda: nn.Upsample(scale_factor=(1.5, 2, 1), mode="trilinear"),
                                          data(50, 1, 2, 3, 4, 5)),
        # CTC: padded and concatenated targets, repeats (the skip rule), an impossible alignment
        # (the gradient is taken wrt the logits: 1.13's wrt log_probs itself assumes a log_softmax before it)
        "ctc-mean": lambda: run(lambda: _LogSoftmaxThen(nn.CTCLoss()), data(55, 6, 2, 4),
                                torch.tensor([[1, 2], [3, 3]]), torch.tensor([6, 5]), torch.tensor([2, 2])),
        "ctc-none-concatenated": lambda: run(lambda: _LogSoftmaxThen(nn.CTCLoss(blank=3, reduction="none")),
                                             data(56, 7, 3, 5), torch.tensor([1, 1, 2, 0, 4, 2]),
                                             torch.tensor([7, 6, 7]), torch.tensor([3, 1, 2])),
        "ctc-sum-zero-infinity": lambda: run(lambda: _LogSoftmaxThen(nn.CTCLoss(reduction="sum", zero_infinity=True)),
                                             data(55, 6, 2, 4), torch.tensor([[1, 2], [3, 3]]),
                                             torch.tensor([6, 2]), torch.tensor([2, 2])),
        "multilabel-margin": lambda: run(lambda: nn.MultiLabelMarginLoss(), data(57, 3, 4),
                                         torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [0, 1, 2, 3]])),
        "multilabel-margin-none-1d": lambda: run(lambda: nn.MultiLabelMarginLoss(reduction="none"), data(57, 4),
                                                 torch.tensor([2, -1, 0, 1])),
        "nllloss2d": lambda: run(lambda: nn.NLLLoss2d(), data(26, 2, 3, 2, 2).log_softmax(1),
                                 torch.tensor([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])),
        # random activations and dropouts: the draws from the seeded stream
        "rrelu-train": lambda: run(lambda: nn.RReLU(), data(53, 4, 6)),
        "rrelu-eval": lambda: run(lambda: nn.RReLU(0.1, 0.3), data(53, 4, 6), train=False),
        "alpha-dropout": lambda: run(lambda: nn.AlphaDropout(0.3), data(54, 5, 4)),
        "feature-alpha-dropout": lambda: run(lambda: nn.FeatureAlphaDropout(0.4), data(54, 3, 4, 2, 2)),
        "max-unpool2d": lambda: run(None, data(2, 2, 4, 6, 8), fn=lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True),
                                                                             2)),
        "max-unpool2d-module-size": lambda: run(lambda: _Unpool(), x2d()),
        "max-unpool1d": lambda: run(None, x1d(), fn=lambda x: F.max_unpool1d(*F.max_pool1d(x, 3, 2, return_indices=True),
                                                                             3, 2)),
        # inplace=True inside a graph: the same values and gradients
        "relu-inplace-sequential": lambda: run(lambda: nn.Sequential(nn.Linear(4, 5), nn.ReLU(inplace=True),
                                                                     nn.Linear(5, 3), nn.LeakyReLU(0.2, True),
                                                                     nn.Linear(3, 2), nn.Hardtanh(inplace=True)),
                                                       data(33, 6, 4)),
    }

    class _LogSoftmaxThen(nn.Module):
        def __init__(self, loss):
            super().__init__()
            self.loss = loss

        def forward(self, logits, *rest):
            return self.loss(logits.log_softmax(2), *rest)

    class _Unpool(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool, self.unpool = nn.MaxPool2d(2, stride=2, return_indices=True), nn.MaxUnpool2d(2, stride=2)

        def forward(self, x):
            out, indices = self.pool(x)
            return self.unpool(out, indices, output_size=x.size())

    class _OutputSize(nn.Module):
        def __init__(self, conv):
            super().__init__()
            self.conv = conv

        def forward(self, x):
            return self.conv(x, output_size=[2, 2, 14, 16])
    return C


def parameter_dict(torch):
    """ParameterDict's registration, order, repr and state_dict."""
    nn = torch.nn
    d = nn.ParameterDict({"b": nn.Parameter(torch.ones(2)), "a": nn.Parameter(torch.zeros(2, 3))})
    d["c"] = torch.ones(1)
    d.update([("e", nn.Parameter(torch.ones(4)))])
    popped = d.pop("b")
    m = nn.Module()
    m.pd = d
    return {"keys": list(d.keys()), "repr": repr(d), "module_repr": repr(m), "len": len(d),
            "state_dict": list(m.state_dict().keys()), "params": [n for n, _ in m.named_parameters()],
            "popped": list(popped.shape), "contains": ["a" in d, "b" in d], "is_param": type(d["c"]).__name__}


def in_place(torch):
    """inplace=True outside a graph: the input itself is written and returned."""
    F = torch.nn.functional
    x = torch.tensor([-1.0, 0.5, 2.0, -3.0])
    y = F.relu(x, inplace=True)
    z = torch.tensor([-1.0, 0.5, 8.0])
    w = torch.nn.ReLU6(inplace=True)(z)
    return {"same": [y is x, w is z], "x": x.tolist(), "z": z.tolist()}


def sync_batchnorm(torch):
    """convert_sync_batchnorm over a model, and SyncBatchNorm's refusal of CPU inputs."""
    nn = torch.nn
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(2, affine=False)))
    with torch.no_grad():
        m[1].running_mean.fill_(0.5)
    weight = m[1].weight
    s = nn.SyncBatchNorm.convert_sync_batchnorm(m)
    out = {"repr": repr(s), "keys": list(s.state_dict().keys()), "same": [s is m, s[1].weight is weight],
           "running_mean": s[1].running_mean.tolist()}
    for mode in ("train", "eval"):
        getattr(s, mode)()
        try:
            s(torch.zeros(2, 3, 5, 5))
        except ValueError as e:
            out[mode] = str(e)
    return out


def lazy_linear(torch):
    """LazyLinear before and after its first forward: repr, class, keys, the drawn values, the gradient."""
    import warnings
    nn = torch.nn
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(2, bias=False))
    before = repr(m)
    torch.manual_seed(0)
    y = m(torch.tensor([[1.0, -2.0, 0.5, 3.0], [0.2, 0.1, -0.4, 1.0]]))
    y.sum().backward()
    return {"warnings": [str(c.message) for c in caught], "before": before, "after": repr(m),
            "classes": [type(c).__name__ for c in m], "keys": list(m.state_dict().keys()),
            "weight": m[0].weight.tolist(), "bias": m[0].bias.tolist(), "weight2": m[2].weight.tolist(),
            "out": [round(v, 5) for v in y.reshape(-1).tolist()],
            "grad": [round(v, 5) for v in m[0].weight.grad.reshape(-1).tolist()]}


def errors(torch):
    nn, F = torch.nn, torch.nn.functional
    z = torch.zeros
    return {
        "conv-groups-in": lambda: nn.Conv2d(3, 4, 3, groups=2),
        "conv-groups-out": lambda: nn.Conv2d(4, 3, 3, groups=2),
        "conv-same-strided": lambda: nn.Conv1d(2, 2, 3, padding="same", stride=2),
        "conv1d-4d-input": lambda: nn.Conv1d(2, 2, 3)(z(1, 2, 3, 4)),
        "groupnorm-divisible": lambda: nn.GroupNorm(3, 4),
        "groupnorm-input": lambda: F.group_norm(z(2, 4, 3), 3),
        "pad-odd": lambda: F.pad(z(2, 3), (1,)),
        "pad-reflect-too-big": lambda: F.pad(z(1, 2, 3), (3, 0), mode="reflect"),
        "glu-odd": lambda: F.glu(z(2, 3)),
        "pixel-shuffle-channels": lambda: F.pixel_shuffle(z(1, 3, 2, 2), 2),
        "interpolate-both": lambda: F.interpolate(z(1, 1, 4), size=2, scale_factor=2.0),
        "interpolate-neither": lambda: F.interpolate(z(1, 1, 4)),
        "interpolate-align-nearest": lambda: F.interpolate(z(1, 1, 4), size=2, align_corners=True),
        "dropout2d-p": lambda: nn.Dropout2d(1.5),
        "instancenorm-dim": lambda: nn.InstanceNorm1d(3)(z(2, 3, 4, 5)),
        "ce-bad-reduction": lambda: F.cross_entropy(z(2, 3), torch.tensor([0, 1]), reduction="avg"),
        "mse-bad-reduction": lambda: nn.MSELoss(reduction="total")(z(2), z(2)),
        "label-smoothing-range": lambda: F.cross_entropy(z(2, 3), torch.tensor([0, 1]), label_smoothing=1.5),
        "embedding-bag-no-offsets": lambda: nn.EmbeddingBag(10, 3)(torch.tensor([1, 2, 3])),
        "maxpool-pad-too-big": lambda: F.max_pool2d(z(1, 1, 4, 4), 2, padding=2),
        "convtranspose-padding-mode": lambda: nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"),
        "convtranspose-output-size": lambda: nn.ConvTranspose2d(2, 2, 3, stride=2)(z(1, 2, 4, 4), output_size=(12, 9)),
    }


def inits(torch):
    """nn.init's trunc_normal_, orthogonal_, dirac_, sparse_ and a deprecated alias, from the seeded stream:
    {name: [warnings..., values...]}."""
    import warnings
    init = torch.nn.init
    out = {}

    def record(name, shape, fn):
        w = torch.empty(*shape)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(w)
        out[name] = {"warnings": [str(c.message) for c in caught], "values": w.reshape(-1).tolist()}

    torch.manual_seed(0)
    record("trunc_normal", (30, 40), lambda w: init.trunc_normal_(w, std=0.02))
    record("trunc_normal_shifted", (50,), lambda w: init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=3.0))
    record("orthogonal", (6, 4), lambda w: init.orthogonal_(w, gain=2.0))
    record("orthogonal_wide_conv", (3, 2, 2, 2), lambda w: init.orthogonal_(w))
    record("dirac", (4, 2, 3, 3), lambda w: init.dirac_(w, 2))
    record("sparse", (5, 4), lambda w: init.sparse_(w, 0.4, 0.5))
    record("xavier_uniform_deprecated", (3, 2), lambda w: init.xavier_uniform(w))
    record("trunc_normal_far_mean", (4,), lambda w: init.trunc_normal_(w, mean=10.0))
    return out
