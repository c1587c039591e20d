"""Operator implementations, one family per module; importing registers them."""
import importlib

from . import registry  # noqa: F401

# Each module registers its op types with @registry.register on import.
_FAMILIES = [
    "utility", "elementwise", "activation", "fc", "shape", "matmul", "softmax",
    "reduction", "loss", "fill", "lstm_unit", "training", "rnn",
]

for _family in _FAMILIES:
    try:
        importlib.import_module("." + _family, __name__)
    except ModuleNotFoundError as _exc:  # a family not written yet
        if _exc.name != __name__ + "." + _family:
            raise
