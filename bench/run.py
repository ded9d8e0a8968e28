"""``make bench``: mcpkit against the official SDK and a hand-written floor.

Over stdio and Streamable HTTP, in the modern era (2026-07-28) and a legacy one
(2025-11-25). Two stages, so the measuring side never shares an environment with mcpkit:

1. In the interpreter that started it (mcpkit's ``.venv``), create or update the bench
   environment ``.venv-bench`` (``mcp==2.3.0``, ``psutil``, ``orjson``, the HTTP stack);
   when HTTP is measured, make sure mcpkit's interpreter has its ``http`` extra (uvicorn
   with httptools), installing it if not. Then re-execute this script with the bench
   environment's interpreter.
2. There, install ``wrk`` if HTTP is measured and it is missing (Debian's package), run
   the interleaved rounds (``suite.py``), run the protocol-core benchmark in mcpkit's
   interpreter (``core.py``), print one table and the goals, and write everything to
   ``bench/results/bench-<time>.json``.

``--profile`` instead runs py-spy on the mcpkit server under load and prints its hottest
functions. See ``bench/README.md`` for the meaning of every number.
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


def _names(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{what}: choose from {', '.join(allowed)}")
    return names


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/run.py",
        description="tools/call add over stdio and Streamable HTTP: mcpkit, official, floor",
    )
    parser.add_argument("--quick", action="store_true", help="a fast smoke run (1 short round)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, help="seconds per stdio phase (default 2)")
    parser.add_argument(
        "--http-seconds", type=int, help="whole seconds per HTTP load level (default 2)"
    )
    parser.add_argument("--cold", type=int, help="cold starts per server per round (default 3)")
    parser.add_argument("--depth", type=int, default=64, help="requests in flight when pipelined")
    parser.add_argument(
        "--eras",
        "--era",
        type=lambda text: _names(text, ("modern", "legacy"), "--eras"),
        default=["modern", "legacy"],
        help="comma-separated: modern, legacy (default both)",
    )
    parser.add_argument(
        "--transports",
        type=lambda text: _names(text, ("stdio", "http"), "--transports"),
        default=["stdio", "http"],
        help="comma-separated: stdio, http (default both)",
    )
    parser.add_argument(
        "--concurrency",
        type=lambda text: [int(part) for part in text.split(",") if part.strip()],
        default=[16, 64],
        help="HTTP connections per concurrent level, besides 1 (default 16,64)",
    )
    parser.add_argument("--wrk-threads", type=int, default=2, help="wrk threads (default 2)")
    parser.add_argument(
        "--pin",
        choices=["http", "all", "none"],
        default="http",
        help="CPU pinning: http (default) puts HTTP servers on the last CPU and wrk on the "
        "first; all also pins stdio servers and the harness; none pins nothing",
    )
    parser.add_argument(
        "--servers", default="mcpkit,official,floor", help="comma-separated subset, in order"
    )
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait per answer")
    parser.add_argument("--no-core", action="store_true", help="skip the protocol-core benchmark")
    parser.add_argument(
        "--profile", action="store_true", help="py-spy the mcpkit server under load instead"
    )
    parser.add_argument("--output", type=Path, help="JSON file (default bench/results/...)")
    parser.add_argument(
        "--mcpkit-ref",
        metavar="REF",
        help="measure mcpkit's src/ and examples/ as of this git commit (e.g. HEAD) instead of "
        "the working tree, which may change while the rounds run",
    )
    parser.add_argument(
        "--mcpkit-tree",
        metavar="DIR",
        type=Path,
        help="measure the src/ and examples/ under DIR instead (an experiment kept outside "
        "the repository)",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    args.argv = list(argv)
    args.rounds = args.rounds or (1 if quick else 5)
    args.seconds = args.seconds or (0.5 if quick else 2.0)
    args.http_seconds = args.http_seconds or (1 if quick else 2)
    args.cold = args.cold or (1 if quick else 3)
    if args.mcpkit_ref and args.mcpkit_tree:
        parser.error("--mcpkit-ref and --mcpkit-tree exclude each other")
    if args.mcpkit_tree and not (args.mcpkit_tree / "src" / "mcpkit").is_dir():
        parser.error(f"--mcpkit-tree: {args.mcpkit_tree}/src/mcpkit is not a directory")
    numbers = (args.rounds, args.seconds, args.http_seconds, args.cold, args.depth)
    if min(numbers) <= 0 or args.wrk_threads < 1:
        parser.error("--rounds, --seconds, --http-seconds, --cold, --depth must be positive")
    if not args.concurrency or min(args.concurrency) < 2:
        parser.error("--concurrency takes levels of 2 connections or more")
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
    from benchenv import ensure_bench_env, ensure_http_extra

    args = parse_args(argv)
    bench_python = ensure_bench_env(BENCH_ENV)
    if "http" in args.transports:
        ensure_http_extra(mcpkit_python(), REPO / "pyproject.toml")
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
