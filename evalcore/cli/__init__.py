"""The `evalcore` command line: one module per command group, all thin faces over the library."""

from evalcore.cli.main import app, main

__all__ = ["app", "main"]
