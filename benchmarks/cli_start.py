"""CLI start time (issue 15, item 6): `evalcore --help` and `evalcore status` on a store holding the sample
project, wall and CPU time (this process's children) per run, the median of `--repeat` runs, against the
goals --help < 0.5 s and status < 1 s.

    .venv/bin/python benchmarks/cli_start.py                       # this checkout
    .venv/bin/python benchmarks/cli_start.py --src /tmp/before     # another checkout (e.g. `git archive`)

CPU time is printed beside wall time because the machine may be shared: load inflates wall time, hardly
CPU time. Each run is a fresh Python calling `evalcore.cli.main.main` with the source folder as the working
directory, so that folder's `evalcore` is the one imported.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"--help": 0.5, "status": 1.0}
CLI = [sys.executable, "-c", "from evalcore.cli.main import main; main()"]


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(src: Path, env: dict[str, str], repeat: int = 5) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each command of GOALS over `repeat` fresh processes, run in `src`
    with `env` added to this process's environment (e.g. the store's URL)."""
    full = {**os.environ, **env}
    out = {}
    for command in GOALS:
        runs = [timed([*CLI, command], src, full) for _ in range(repeat)]
        out[command] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT, help="Checkout whose evalcore is timed.")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"EVALCORE_DATABASE_URL": f"sqlite:///{tmp}/store.db"}
        sample = [*CLI, "import", str(ROOT / "data" / "sample")]
        subprocess.run(sample, cwd=args.src, env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)
        print(f"evalcore from {args.src}, median of {args.repeat} runs")
        print(f"{'command':<10} {'wall s':>7} {'cpu s':>7} {'goal s':>7}")
        floor = statistics.median(timed([sys.executable, "-c", "pass"], args.src, dict(os.environ))[1]
                                  for _ in range(3))  # fmt: skip
        print(f"{'(python)':<10} {'':>7} {floor:>7.2f} {'':>7}  the interpreter alone, for scale")
        for command, (wall, cpu) in measure(args.src, env, args.repeat).items():
            print(f"{command:<10} {wall:>7.2f} {cpu:>7.2f} {GOALS[command]:>7.2f}")


if __name__ == "__main__":
    main()
