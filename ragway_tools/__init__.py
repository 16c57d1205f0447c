"""ragway's operator tooling: the ``ragway`` command, the launcher, evaluation, training.

This is the top layer: it may import the runtime library (``ragway``) and the
services (``services.*``) it starts, measures or drives; nothing below imports
it back (``make lint`` enforces the layers with import-linter, see pyproject.toml).
"""
