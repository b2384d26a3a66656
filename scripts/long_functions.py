"""List the functions longer than a limit (issue 24: none over 80 lines in generators/, specs/, runs/ and
jobs/ without a comment saying why it must be long).

    .venv/bin/python scripts/long_functions.py                       # the four packages, limit 80
    .venv/bin/python scripts/long_functions.py --limit 60 evalcore   # any folders, another limit

A function's length is `end_lineno - lineno + 1` (its decorators aside, its docstring in). Prints one
line per function, longest first, and exits 1 when there is any, so a CI step can hold the line.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

PACKAGES = ("evalcore/generators", "evalcore/specs", "evalcore/runs", "evalcore/jobs")


def long_functions(folders: list[str], limit: int) -> list[tuple[int, str, int, str]]:
    """(length, file, line, name) of every function in `folders` longer than `limit` lines."""
    found = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > limit:
                        found.append((length, str(path), node.lineno, node.name))
    return sorted(found, reverse=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", default=list(PACKAGES))
    parser.add_argument("--limit", type=int, default=80)
    args = parser.parse_args()
    found = long_functions(args.folders, args.limit)
    for length, path, line, name in found:
        print(f"{length:4d} {path}:{line} {name}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
