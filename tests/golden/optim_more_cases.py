"""The calls of optim_more.json that must raise, written once for both sides (gen_optim_more.py runs them on
PyTorch 1.13, tests/python/test_optim_more.py on tinyddp): the argument checks of RMSprop, Adagrad, Adamax, NAdam,
RAdam, Adadelta, Rprop and ASGD. The runs themselves go through optim_cases.py's interpreter."""


def errors(torch):
    O = torch.optim

    def p():
        return torch.nn.Parameter(torch.ones(2))

    return {
        "rmsprop-lr": lambda: O.RMSprop([p()], lr=-1),
        "rmsprop-eps": lambda: O.RMSprop([p()], eps=-1e-3),
        "rmsprop-momentum": lambda: O.RMSprop([p()], momentum=-0.5),
        "rmsprop-weight-decay": lambda: O.RMSprop([p()], weight_decay=-1),
        "rmsprop-alpha": lambda: O.RMSprop([p()], alpha=-0.1),
        "adagrad-lr-decay": lambda: O.Adagrad([p()], lr_decay=-1.0),
        "adagrad-initial-accumulator": lambda: O.Adagrad([p()], initial_accumulator_value=-2),
        "adagrad-eps": lambda: O.Adagrad([p()], eps=-1.0),
        "adamax-beta0": lambda: O.Adamax([p()], betas=(1.0, 0.9)),
        "adamax-beta1": lambda: O.Adamax([p()], betas=(0.9, -0.1)),
        "nadam-momentum-decay": lambda: O.NAdam([p()], momentum_decay=-1e-3),
        "nadam-lr": lambda: O.NAdam([p()], lr=-0.01),
        "radam-weight-decay": lambda: O.RAdam([p()], weight_decay=-1e-2),
        "adadelta-rho": lambda: O.Adadelta([p()], rho=1.5),
        "adadelta-lr": lambda: O.Adadelta([p()], lr=-1),
        "rprop-etas": lambda: O.Rprop([p()], etas=(1.5, 2.0)),
        "rprop-etas-plus": lambda: O.Rprop([p()], etas=(0.5, 0.9)),
        "asgd-weight-decay": lambda: O.ASGD([p()], weight_decay=-1),
        "asgd-lr": lambda: O.ASGD([p()], lr=-0.1),
        "rmsprop-empty": lambda: O.RMSprop([]),
    }
