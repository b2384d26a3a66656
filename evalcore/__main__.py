"""`python -m evalcore ...`: the `evalcore` command, where its console script is not on PATH (a worker
started by `evalcore serve` uses this, with the same interpreter)."""

from evalcore.cli import main

main()
