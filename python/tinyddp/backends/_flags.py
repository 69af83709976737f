"""1.13's torch/backends/__init__.py PropModule: a module whose attributes are properties (checked setters)."""
import types


class PropModule(types.ModuleType):
    def __init__(self, m, name):
        super().__init__(name)
        self.m = m

    def __getattr__(self, attr):
        return self.m.__getattribute__(attr)


def bool_flag(setter_name):
    """A module property holding a bool, refusing anything else with the text of 1.13's C++ setter."""
    def get(module):
        return module.__dict__["_flags"][setter_name]

    def set_(module, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{setter_name} expects a bool, but got {type(value).__name__}")
        module.__dict__["_flags"][setter_name] = value
    return property(get, set_)
