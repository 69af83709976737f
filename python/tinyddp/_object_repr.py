"""Python's default object repr, as 1.13 prints it: "<torch.utils.data.dataloader.DataLoader object at 0x...>".
The classes of tinyddp that keep object's repr (datasets, samplers, loaders and their iterators, LR schedulers,
hook handles, generators) take this one, which names tinyddp's modules as torch's (the module path below tinyddp
mirrors torch's) or as a fixed torch name where tinyddp keeps the class elsewhere; a user's subclass still prints
its own module."""


def torch_module_name(cls):
    module = cls.__dict__.get("_torch_module") or cls.__module__
    if module == "tinyddp" or module.startswith("tinyddp."):
        module = "torch" + module[len("tinyddp"):]
    return module


def object_repr(self):
    cls = type(self)
    return f"<{torch_module_name(cls)}.{cls.__qualname__} object at {hex(id(self))}>"
