"""The Gradio evidence console, mounted at ``/console`` when ``RAGWAY_CONSOLE=gradio``.

Gradio is imported only here, and only when the setting asks for it, so the default
gateway never loads it (docs/channels.md).
"""
