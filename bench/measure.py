"""Stage 2 of ``bench/run.py``: measure, print, save. Runs in ``.venv-bench``.

This side imports no MCP library: it spawns servers and speaks JSON to them over stdio
(``stdio_bench.py``) or HTTP (``http_bench.py`` and wrk), and runs the protocol-core
benchmark in mcpkit's own interpreter as a child process (``core.py``), reading its JSON
from stdout.
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
from goals import format_goals, goals
from process import BenchFailure, child_environment
from profiling import profile_http, profile_sequential
from report import format_core, format_table, summaries
from subjects import ServerSpec, servers
from suite import Outcome, Section, SuiteConfig, run_rounds
from wire import Dialect
from wrk import ensure_wrk

HTTP_PACKAGES = ("uvicorn", "httptools", "uvloop")

__all__ = ["measure"]


def _versions_in(python: Path, env: dict[str, str]) -> dict[str, str]:
    """Versions of the HTTP stack in another interpreter (``?`` when absent)."""
    code = (
        "import json, importlib.metadata as m\n"
        "def v(n):\n"
        "    try: return m.version(n)\n"
        "    except m.PackageNotFoundError: return '?'\n"
        f"print(json.dumps({{n: v(n) for n in {list(HTTP_PACKAGES)!r}}}))"
    )
    probe = subprocess.run([str(python), "-c", code], capture_output=True, check=False, env=env)
    if probe.returncode != 0:
        return {}
    versions: dict[str, str] = json.loads(probe.stdout)
    return versions


def _own_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


def _machine(wrk: str | None, mcpkit_python: Path, env: dict[str, str]) -> dict[str, Any]:
    wrk_version = ""
    if wrk:
        shown = subprocess.run([wrk, "-v"], capture_output=True, check=False)
        first = (shown.stdout or shown.stderr).decode(errors="replace").split("\n")[0]
        wrk_version = first.split(" Copyright")[0]
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "mcp": _own_version("mcp"),
        "bench_env_http": {name: _own_version(name) for name in HTTP_PACKAGES},
        "mcpkit_env_http": _versions_in(mcpkit_python, env),
        "wrk": wrk_version.strip(),
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


def _select(all_specs: list[ServerSpec], names: str) -> list[ServerSpec]:
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    known = {spec.name: spec for spec in all_specs}
    unknown = [name for name in wanted if name not in known]
    if unknown or not wanted:
        raise SystemExit(f"bench: unknown servers {unknown}; known: {sorted(known)}")
    return [known[name] for name in wanted]


def _sections(args: argparse.Namespace) -> list[Section]:
    return [Section(transport, era) for era in args.eras for transport in args.transports]


def _pinning(args: argparse.Namespace) -> tuple[int | None, int | None]:
    """(server CPU, load-generator CPU), or no pinning with fewer than two CPUs."""
    cpus = sorted(os.sched_getaffinity(0))
    if args.pin == "none" or len(cpus) < 2:
        return None, None
    return cpus[-1], cpus[0]


def _pinning_text(config: SuiteConfig) -> str:
    if config.server_cpu is None:
        return "not pinned"
    http = f"HTTP servers on CPU {config.server_cpu}, wrk on CPU {config.client_cpu}"
    if config.pin_stdio:
        return f"{http}; stdio servers on CPU {config.server_cpu}, harness on {config.client_cpu}"
    return f"{http}; stdio not pinned"


def _progress(round_index: int, section: Section, name: str, turn: dict[str, float]) -> None:
    head = f"  round {round_index + 1} {section.key:<13} {name:<9}"
    if section.transport == "stdio":
        print(
            f"{head} cold {turn['cold_start_ms']:6.1f} ms"
            f"  seq {turn['seq_calls_per_s']:8,.0f}/s (p50 {turn['seq_p50_us']:5.0f} us)"
            f"  pipe {turn['pipe_calls_per_s']:8,.0f}/s  rss {turn['peak_rss_mb']:5.1f} MB",
            flush=True,
        )
        return
    levels = "  ".join(
        f"{key.removesuffix('_rps')} {value:7,.0f}/s"
        for key, value in turn.items()
        if key.endswith("_rps")
    )
    print(
        f"{head} ready {turn['ready_ms']:5.0f} ms  {levels}  rss {turn['peak_rss_mb']:5.1f} MB",
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


def _config(args: argparse.Namespace, wrk: str | None) -> SuiteConfig:
    server_cpu, client_cpu = _pinning(args)
    return SuiteConfig(
        rounds=args.rounds,
        seconds=args.seconds,
        cold=args.cold,
        depth=args.depth,
        timeout=args.timeout,
        concurrency=tuple(args.concurrency),
        http_seconds=args.http_seconds,
        warmup_seconds=1,
        wrk=wrk or "wrk",
        wrk_threads=args.wrk_threads,
        server_cpu=server_cpu,
        client_cpu=client_cpu,
        pin_stdio=args.pin == "all",
    )


def _profile(args: argparse.Namespace, specs: list[ServerSpec], bench_env: Path) -> int:
    py_spy = ensure_profiler(bench_env)
    subject = specs[0]
    results = Path(__file__).with_name("results")
    results.mkdir(exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    seconds = max(args.seconds, 5.0)
    config = _config(args, ensure_wrk() if "http" in args.transports else None)
    era = args.eras[0]
    dialect = Dialect(era, discover=subject.discover)
    connections = args.concurrency[0]
    for transport in args.transports:
        for view in ("busy", "gil"):
            output = results / f"profile-{subject.name}-{transport}-{stamp}-{view}.txt"
            load = "sequential calls" if transport == "stdio" else f"wrk, {connections} connections"
            print(
                f"\nbench: profiling {subject.name} over {transport} ({era}) under {load} "
                f"for {seconds:.0f} s ({view} samples)",
                flush=True,
            )
            if transport == "stdio":
                summary = profile_sequential(
                    subject, dialect, py_spy, seconds, output, gil=view == "gil"
                )
            else:
                summary = profile_http(
                    subject, dialect, py_spy, config, connections, output, gil=view == "gil"
                )
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
        if args.mcpkit_tree:
            snapshot: Path | None = args.mcpkit_tree.resolve()
            provenance = {"ref": f"tree {snapshot}", "commit": "-", "uncommitted": []}
        else:
            snapshot = Path(scratch) if args.mcpkit_ref else None
            commit = _snapshot(repo, args.mcpkit_ref, snapshot) if snapshot else None
            provenance = _provenance(repo, args.mcpkit_ref, commit)
        all_specs = servers(repo, mcpkit_python, Path(sys.executable), snapshot)
        env = {**child_environment(), **dict(all_specs[0].env)}
        provenance["imported_from"] = _check_interpreter(mcpkit_python, env)
        specs = _select(all_specs, args.servers)
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
    wrk = ensure_wrk() if "http" in args.transports else None
    config = _config(args, wrk)
    if config.client_cpu is not None and config.pin_stdio:
        os.sched_setaffinity(0, {config.client_cpu})
    machine = _machine(wrk, mcpkit_python, env)
    sections = _sections(args)
    started = datetime.datetime.now()
    pinning = _pinning_text(config)
    print(
        f"bench: tools/call add over {', '.join(s.key for s in sections)}; {config.rounds} "
        f"round(s); stdio {config.seconds:g} s per phase, {config.cold} cold start(s), "
        f"{config.depth} in flight; HTTP {config.http_seconds} s per level (1, "
        f"{', '.join(map(str, config.concurrency))} connections, wrk {config.wrk_threads} "
        f"threads); {machine['cpus']} CPUs, {pinning}; load "
        f"{machine['load_average'][0]:.2f}",
        flush=True,
    )
    clock = time.perf_counter()
    try:
        outcome = run_rounds(
            sections,
            specs,
            lambda section, spec: Dialect(section.era, discover=spec.discover),
            config,
            _progress,
        )
        core = None if args.no_core else _core(mcpkit_python, args.quick, env)
    except BenchFailure as failure:
        print(f"\nbench: FAILED: {failure}", file=sys.stderr, flush=True)
        return 1
    machine["load_average_after"] = list(os.getloadavg())
    tables = {
        key: {name: summaries(s.samples) for name, s in per_server.items()}
        for key, per_server in outcome.results.items()
    }
    lines = _report(config, specs, sections, outcome, tables, core, machine)
    changes = len(provenance["uncommitted"])
    lines += [
        "",
        f"mcpkit: {provenance['ref']} at {provenance['commit'][:12]}"
        + (f" with {changes} uncommitted change(s) in src/ or examples/" if changes else "")
        + f", imported from {Path(provenance['imported_from']).parent.parent}",
        f"machine: {machine['cpus']} CPUs, {machine['platform']}, Python {machine['python']}, "
        f"{machine['wrk'] or 'no wrk'}; {pinning}",
        f"load average {machine['load_average'][0]:.2f} -> {machine['load_average_after'][0]:.2f};"
        f" {time.perf_counter() - clock:.0f} s in all; {started:%Y-%m-%d %H:%M}",
    ]
    print("\n".join(lines), flush=True)
    output = args.output or repo / "bench" / "results" / f"bench-{started:%Y%m%d-%H%M%S}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "started": started.isoformat(timespec="seconds"),
        "command": ["bench/run.py", *args.argv],
        "config": {**config.to_json(), "eras": args.eras, "quick": args.quick},
        "machine": machine,
        "mcpkit": provenance,
        "sections": {
            key: {
                "servers": {
                    name: {**samples.to_json(), "summary": _summary_json(tables[key][name])}
                    for name, samples in per_server.items()
                },
                "not_available": outcome.unavailable.get(key, {}),
            }
            for key, per_server in outcome.results.items()
        },
        "core": core,
        "goals": [goal.judge(tables, _core_rates(core)) for goal in goals()],
        "table": lines,
    }
    output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results: {output}")
    return 0


def _summary_json(table: dict[str, Any]) -> dict[str, Any]:
    return {metric: summary.to_json() for metric, summary in table.items()}


def _core_rates(core: dict[str, Any] | None) -> dict[str, float]:
    if core is None:
        return {}
    return {case["case"]: case["ops_per_second"] for case in core["cases"]}


def _report(
    config: SuiteConfig,
    specs: list[ServerSpec],
    sections: list[Section],
    outcome: Outcome,
    tables: dict[str, Any],
    core: dict[str, Any] | None,
    machine: dict[str, Any],
) -> list[str]:
    """The printed report: the table, the protocol core, the goals."""
    http_note = (
        f"uvicorn {machine['mcpkit_env_http'].get('uvicorn', '?')}, 1 worker, httptools; "
        f"wrk {config.wrk_threads} threads"
    )
    lines = [""]
    lines += format_table(
        [(s.key, tables[s.key], outcome.unavailable.get(s.key, {})) for s in sections],
        [spec.name for spec in specs],
        depth=config.depth,
        concurrency=config.concurrency,
        rounds=config.rounds,
        http_note=http_note,
    )
    if core is not None:
        lines += ["", "protocol core, in process (mcpkit.protocol), median [min-max] of repeats"]
        lines += format_core(core["cases"])
    judged = [goal.judge(tables, _core_rates(core)) for goal in goals()]
    lines += ["", "goals (ratios of medians from this run; stdio and HTTP on 2026-07-28)"]
    lines += format_goals(judged)
    return lines
