"""``make bench``: mcpkit against the official SDK and a hand-written floor, over stdio.

Two stages, so the measuring side never shares an environment with mcpkit:

1. In the interpreter that started it (mcpkit's ``.venv``), create or update the bench
   environment ``.venv-bench`` (``mcp==2.3.0``, ``psutil``, ``orjson``), then re-execute
   this script with that environment's interpreter.
2. There, run the interleaved stdio rounds (``suite.py``), run the protocol-core
   benchmark in mcpkit's interpreter (``core.py``), print the tables and the targets,
   and write everything to ``bench/results/bench-<time>.json``.

``--profile`` instead runs py-spy on the mcpkit server under sequential load and prints
its hottest functions. See ``bench/README.md`` for the meaning of every number.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
BENCH_ENV = REPO / ".venv-bench"
STAGE_VARIABLE = "MCPKIT_BENCH_STAGE"
MCPKIT_PYTHON_VARIABLE = "MCPKIT_BENCH_PYTHON"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/run.py", description="stdio tools/call benchmark: mcpkit, official, floor"
    )
    parser.add_argument("--quick", action="store_true", help="a fast smoke run (1 short round)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, help="seconds per timed phase (default 2)")
    parser.add_argument("--cold", type=int, help="cold starts per server per round (default 3)")
    parser.add_argument("--depth", type=int, default=64, help="requests in flight when pipelined")
    parser.add_argument("--era", choices=["modern", "legacy"], default="modern")
    parser.add_argument(
        "--servers", default="mcpkit,official,floor", help="comma-separated subset, in order"
    )
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait per answer")
    parser.add_argument("--no-core", action="store_true", help="skip the protocol-core benchmark")
    parser.add_argument(
        "--profile", action="store_true", help="py-spy the mcpkit server under sequential load"
    )
    parser.add_argument("--output", type=Path, help="JSON file (default bench/results/...)")
    parser.add_argument(
        "--mcpkit-ref",
        metavar="REF",
        help="measure mcpkit's src/ and examples/ as of this git commit (e.g. HEAD) instead of "
        "the working tree, which may change while the rounds run",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    args.rounds = args.rounds or (1 if quick else 5)
    args.seconds = args.seconds or (0.5 if quick else 2.0)
    args.cold = args.cold or (1 if quick else 3)
    if args.rounds < 1 or args.seconds <= 0 or args.cold < 1 or args.depth < 1:
        parser.error("--rounds, --seconds, --cold and --depth must be positive")
    return args


def mcpkit_python() -> Path:
    """mcpkit's interpreter: the one that started stage 1, else the repository's .venv."""
    chosen = os.environ.get(MCPKIT_PYTHON_VARIABLE)
    if chosen:
        return Path(chosen)
    venv = REPO / ".venv" / "bin" / "python"
    return venv if venv.exists() else Path(sys.executable)


def stage_one(argv: list[str]) -> None:
    """Build the bench environment, then become this script running inside it."""
    from benchenv import ensure_bench_env

    parse_args(argv)
    bench_python = ensure_bench_env(BENCH_ENV)
    env = dict(os.environ)
    env[STAGE_VARIABLE] = "measure"
    env.setdefault(MCPKIT_PYTHON_VARIABLE, str(mcpkit_python()))
    env.pop("PYTHONPATH", None)
    sys.stdout.flush()
    os.execve(bench_python, [str(bench_python), str(Path(__file__).resolve()), *argv], env)


def main(argv: list[str]) -> int:
    if os.environ.get(STAGE_VARIABLE) != "measure":
        stage_one(argv)
    from measure import measure

    return measure(parse_args(argv), REPO, BENCH_ENV, mcpkit_python())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
