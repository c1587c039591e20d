"""Placeholder: the core helper writes Net here."""


class Net:
    pass


class ExecutionStep:
    pass


class Plan:
    pass
