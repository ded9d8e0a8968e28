"""Stage 2 of ``bench/run.py``: measure, print, save. Runs in ``.venv-bench``.

This side imports no MCP library: it spawns servers and speaks JSON to them
(``stdio_bench.py``), and runs the protocol-core benchmark in mcpkit's own interpreter
as a child process (``core.py``), reading its JSON from stdout.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from benchenv import ensure_profiler
from profiling import profile_sequential
from report import format_core, format_stdio, format_targets, summaries, targets
from stdio_bench import BenchFailure, child_environment
from suite import SuiteConfig, run_rounds
from targets import ServerSpec, stdio_servers
from wire import Dialect

__all__ = ["measure"]


def _machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "mcp": metadata.version("mcp"),
        "load_average": list(os.getloadavg()),
    }


def _check_interpreter(python: Path, env: dict[str, str]) -> str:
    """Where ``python`` imports mcpkit from (fails clearly when it cannot)."""
    probe = subprocess.run(
        [str(python), "-c", "import mcpkit, orjson; print(mcpkit.__file__)"],
        capture_output=True,
        check=False,
        env=env,
    )
    if probe.returncode != 0:
        raise SystemExit(
            f"bench: {python} cannot import mcpkit (run `make bench`, which installs it): "
            + probe.stderr.decode()[-500:]
        )
    return probe.stdout.decode().strip()


def _git(repo: Path, *arguments: str) -> str:
    completed = subprocess.run(
        ["git", "-C", str(repo), *arguments], capture_output=True, check=False
    )
    if completed.returncode != 0:
        raise SystemExit(f"bench: git {' '.join(arguments)} failed: {completed.stderr.decode()}")
    return completed.stdout.decode()


def _snapshot(repo: Path, ref: str, into: Path) -> str:
    """Export ``src/`` and ``examples/`` of ``ref`` into ``into``; returns the commit."""
    commit = _git(repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", commit, "src", "examples"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return commit


def _provenance(repo: Path, ref: str | None, commit: str | None) -> dict[str, Any]:
    """Which mcpkit was measured: a commit, or the working tree and what is uncommitted."""
    if commit is not None:
        return {"ref": ref, "commit": commit, "uncommitted": []}
    head = _git(repo, "rev-parse", "HEAD").strip()
    dirty = _git(repo, "status", "--porcelain", "--", "src", "examples").splitlines()
    return {"ref": "working tree", "commit": head, "uncommitted": dirty}


def _select(all_specs: list[ServerSpec], names: str, era: str) -> list[ServerSpec]:
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    known = {spec.name: spec for spec in all_specs}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise SystemExit(f"bench: unknown servers {unknown}; known: {sorted(known)}")
    chosen = []
    for name in wanted:
        if known[name].speaks(era):
            chosen.append(known[name])
        else:
            print(f"bench: {name} does not speak the {era} era; left out", flush=True)
    if not chosen:
        raise SystemExit("bench: no server left to measure")
    return chosen


def _progress(round_index: int, name: str, turn: dict[str, float]) -> None:
    print(
        f"  round {round_index + 1} {name:<9} cold {turn['cold_start_ms']:7.1f} ms"
        f"  seq {turn['seq_calls_per_s']:9,.0f}/s (p50 {turn['seq_p50_us']:6.0f} us)"
        f"  pipe {turn['pipe_calls_per_s']:9,.0f}/s  rss {turn['peak_rss_mb']:5.1f} MB",
        flush=True,
    )


def _core(python: Path, quick: bool, env: dict[str, str]) -> dict[str, Any]:
    arguments = ["--seconds", "0.05", "--repeats", "3"] if quick else ["--seconds", "0.3"]
    completed = subprocess.run(
        [str(python), str(Path(__file__).with_name("core.py")), *arguments],
        capture_output=True,
        check=False,
        env=env,
    )
    if completed.returncode != 0:
        raise BenchFailure("protocol-core benchmark failed:\n" + completed.stderr.decode())
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def _profile(args: argparse.Namespace, specs: list[ServerSpec], bench_env: Path) -> int:
    py_spy = ensure_profiler(bench_env)
    subject = specs[0]
    results = Path(__file__).with_name("results")
    results.mkdir(exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    seconds = max(args.seconds, 5.0)
    dialect = Dialect(args.era, discover=subject.discover)
    for view in ("busy", "gil"):
        output = results / f"profile-{subject.name}-{stamp}-{view}.txt"
        print(
            f"\nbench: profiling {subject.name} under sequential load for {seconds:.0f} s "
            f"({view} samples)",
            flush=True,
        )
        summary = profile_sequential(subject, dialect, py_spy, seconds, output, gil=view == "gil")
        print(
            f"{summary['samples']} {view} samples; {summary['calls_per_second']:,.0f} calls/s "
            f"under the profiler; server CPU {summary['server_cpu_per_call_us']:.1f} us/call"
        )
        for kind in ("self", "total"):
            print(f"top functions by {kind} time (% of {view} samples)")
            for name, share in summary[kind]:
                print(f"  {share:5.1f}%  {name}")
        print(f"raw stacks: {output}", flush=True)
    return 0


def measure(args: argparse.Namespace, repo: Path, bench_env: Path, mcpkit_python: Path) -> int:
    """Run the benchmark the arguments describe; 0 when every answer was right."""
    with tempfile.TemporaryDirectory(prefix="mcpkit-bench-") as scratch:
        snapshot = Path(scratch) if args.mcpkit_ref else None
        commit = _snapshot(repo, args.mcpkit_ref, snapshot) if snapshot else None
        provenance = _provenance(repo, args.mcpkit_ref, commit)
        all_specs = stdio_servers(repo, mcpkit_python, Path(sys.executable), snapshot)
        env = {**child_environment(), **dict(all_specs[0].env)}
        provenance["imported_from"] = _check_interpreter(mcpkit_python, env)
        specs = _select(all_specs, args.servers, args.era)
        if args.profile:
            return _profile(args, specs, bench_env)
        return _run(args, repo, specs, mcpkit_python, env, provenance)


def _run(
    args: argparse.Namespace,
    repo: Path,
    specs: list[ServerSpec],
    mcpkit_python: Path,
    env: dict[str, str],
    provenance: dict[str, Any],
) -> int:
    config = SuiteConfig(args.rounds, args.seconds, args.cold, args.depth, args.timeout)
    machine = _machine()
    started = datetime.datetime.now()
    print(
        f"bench: stdio tools/call add, era {args.era}, {config.rounds} round(s) x "
        f"{config.seconds:g} s per phase, {config.cold} cold start(s) per server per round, "
        f"{config.depth} in flight; {machine['cpus']} CPUs, load {machine['load_average'][0]:.2f}",
        flush=True,
    )
    clock = time.perf_counter()
    try:
        results = run_rounds(
            specs, lambda spec: Dialect(args.era, discover=spec.discover), config, _progress
        )
        core = None if args.no_core else _core(mcpkit_python, args.quick, env)
    except BenchFailure as failure:
        print(f"\nbench: FAILED: {failure}", file=sys.stderr, flush=True)
        return 1
    machine["load_average_after"] = list(os.getloadavg())
    table = summaries({name: samples.samples for name, samples in results.items()})
    subject = specs[0].name
    lines = [""]
    lines += format_stdio(
        f"stdio tools/call add ({args.era}), median [min-max] over {config.rounds} round(s)",
        table,
        config.depth,
        subject,
    )
    core_rates: dict[str, float] = {}
    if core is not None:
        lines += ["", "protocol core, in process (mcpkit.protocol), median [min-max] of repeats"]
        lines += format_core(core["cases"])
        core_rates = {case["case"]: case["ops_per_second"] for case in core["cases"]}
    goals = targets()
    judged = [goal.judge(table, core_rates) for goal in goals]
    lines += ["", "targets (ratios of medians from this run)"]
    lines += format_targets(judged, [goal.unit for goal in goals])
    changes = len(provenance["uncommitted"])
    lines += [
        "",
        f"mcpkit: {provenance['ref']} at {provenance['commit'][:12]}"
        + (f" with {changes} uncommitted change(s) in src/ or examples/" if changes else "")
        + f", imported from {Path(provenance['imported_from']).parent.parent}",
        f"load average {machine['load_average'][0]:.2f} -> {machine['load_average_after'][0]:.2f};"
        f" {time.perf_counter() - clock:.0f} s in all",
    ]
    print("\n".join(lines), flush=True)
    output = args.output or repo / "bench" / "results" / f"bench-{started:%Y%m%d-%H%M%S}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "started": started.isoformat(timespec="seconds"),
        "config": {**vars(config), "era": args.era, "quick": args.quick},
        "machine": machine,
        "mcpkit": provenance,
        "servers": {
            name: {
                **samples.to_json(),
                "summary": {m: s.to_json() for m, s in table[name].items()},
            }
            for name, samples in results.items()
        },
        "core": core,
        "targets": judged,
        "table": lines,
    }
    output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results: {output}")
    return 0
