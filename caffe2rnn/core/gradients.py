"""Placeholder: the gradients helper writes GradientRegistry/IR here."""


class GradientRegistry:
    pass


class IR:
    pass
