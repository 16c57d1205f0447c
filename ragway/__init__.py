"""ragway's shared library: contracts (``ragway.v1``), models, text and process plumbing.

The services under ``services/`` import from here; nothing here imports a service.
"""

__version__ = "0.1.0"
