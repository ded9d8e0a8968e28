"""The HTTP load generator: Debian's ``wrk`` with ``bench/lua/mcp_post.lua``.

``wrk`` is an event-driven C client; with LuaJIT checking every body it still answers
well over a hundred thousand small requests per second per thread, far above what any
Python server here reaches, so the measured figure is the server's. The harness shows
the load generator's own CPU time per request (from ``getrusage`` of the finished wrk
child) next to the server's, so that claim can be checked on every run.

Sequential load is one thread and one connection (the next request leaves when the
previous answer is in); concurrency ``c`` is ``c`` connections over a few threads. Every
response is checked by the Lua script; a run with a non-200 status, a body without the
expected result, or a socket error fails loudly.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from process import BenchFailure, pinned_to

SCRIPT = Path(__file__).resolve().parent / "lua" / "mcp_post.lua"
MARKER = "MCPBENCH "
ERROR_FIELDS = (
    "non200",
    "bad_body",
    "connect_errors",
    "read_errors",
    "write_errors",
    "status_errors",
    "timeouts",
)

__all__ = ["WrkResult", "ensure_wrk", "run_wrk"]


@dataclass(frozen=True)
class WrkResult:
    """What one wrk run measured (latencies in microseconds)."""

    requests: int
    seconds: float
    p50_us: float
    p90_us: float
    p99_us: float
    max_us: float
    client_cpu: float
    raw: dict[str, Any]

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.seconds

    @property
    def client_cpu_per_request_us(self) -> float:
        return self.client_cpu / self.requests * 1e6


def ensure_wrk() -> str:
    """The path of ``wrk``; installs Debian's package when it is missing (and says so)."""
    found = shutil.which("wrk")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise SystemExit(
            "bench: the HTTP benchmark needs wrk; install it (Debian: apt-get install -y wrk) "
            "or leave HTTP out with --transports stdio"
        )
    print("bench: wrk not found; installing Debian's wrk (apt-get install -y wrk) ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [apt, "install", "-y", "-q", "wrk"]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        subprocess.run([apt, "update", "-q"], env=env, capture_output=True, check=False)
        completed = subprocess.run(install, env=env, capture_output=True, check=False)
        if completed.returncode != 0:
            sys.stderr.write(completed.stderr.decode(errors="replace")[-2000:])
            raise SystemExit("bench: apt-get install -y wrk failed")
    found = shutil.which("wrk")
    if not found:
        raise SystemExit("bench: wrk is still not on PATH after installing it")
    return found


def script_arguments(
    body: bytes,
    id_slot: bytes,
    headers: Sequence[tuple[str, str]],
    expect: Sequence[str],
    refuse: Sequence[str],
    *,
    unique_ids: bool,
) -> list[str]:
    """The ``key=value`` arguments ``mcp_post.lua`` reads in ``init``."""
    arguments = [
        f"body={body.decode()}",
        f"id_slot={id_slot.decode()}",
        f"ids={'unique' if unique_ids else 'same'}",
    ]
    arguments += [f"header={name}: {value}" for name, value in headers]
    arguments += [f"expect={text}" for text in expect]
    arguments += [f"refuse={text}" for text in refuse]
    return arguments


def run_wrk(
    wrk: str,
    url: str,
    arguments: Sequence[str],
    *,
    connections: int,
    threads: int,
    seconds: int,
    cpu: int | None = None,
    timeout: float = 10.0,
) -> WrkResult:
    """One checked wrk run; raises :class:`BenchFailure` on any error or wrong answer."""
    threads = max(1, min(threads, connections))
    command = [
        wrk,
        f"-t{threads}",
        f"-c{connections}",
        f"-d{seconds}s",
        f"--timeout={max(1, round(timeout))}s",
        "-s",
        str(SCRIPT),
        url,
        "--",
        *arguments,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    completed = subprocess.run(
        command,
        capture_output=True,
        check=False,
        timeout=seconds + timeout + 30,
        preexec_fn=pinned_to(cpu),
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    output = completed.stdout.decode(errors="replace")
    line = next((ln for ln in output.splitlines() if ln.startswith(MARKER)), None)
    if completed.returncode != 0 or line is None:
        raise BenchFailure(
            f"wrk failed (exit {completed.returncode}): {completed.stderr.decode()[-1500:]}"
            f"{output[-1500:]}"
        )
    raw: dict[str, Any] = json.loads(line[len(MARKER) :])
    errors = {name: raw[name] for name in ERROR_FIELDS if raw[name]}
    if errors or not raw["requests"] or raw["checked"] != raw["requests"]:
        raise BenchFailure(
            f"{connections} connection(s): {raw['requests']} requests, {raw['checked']} checked, "
            f"errors {errors or 'none'}; first problem: {raw['first_problem'] or '(none)'}"
        )
    return WrkResult(
        requests=raw["requests"],
        seconds=raw["duration_us"] / 1e6,
        p50_us=raw["p50_us"],
        p90_us=raw["p90_us"],
        p99_us=raw["p99_us"],
        max_us=raw["max_us"],
        client_cpu=client_cpu,
        raw=raw,
    )
