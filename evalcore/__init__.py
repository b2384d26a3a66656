"""evalcore: behavior-driven evaluation data for conversational and compound AI systems.

The package face also holds `lazy_exports`, which the stage packages' faces use: a face names what it
re-exports and from which module, and the module is imported on first use, so `evalcore --help` and
`evalcore status` load no pandas, networkx, numpy or alembic for names they never touch (issue 15: the
CLI started in 1.9 s and 3.5 s).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

__version__ = "0.1.0"


def lazy_exports(
    package: str, origins: dict[str, tuple[str, ...]]
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """`__getattr__`, `__dir__` and `__all__` for `package`, re-exporting `origins` (module -> names)."""
    where = {name: module for module, names in origins.items() for name in names}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next lookup is an ordinary attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__, sorted(where)
