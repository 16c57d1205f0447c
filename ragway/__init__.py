"""ragway's runtime library: contracts (``ragway.v1``), models, text and process plumbing.

The services under ``services/`` import from here; nothing here imports a service
or the operator tooling (``ragway_tools``). ``make lint`` enforces it.
"""

__version__ = "0.1.0"
