"""Where the subject's time goes under load: py-spy, summarised.

``run.py --profile`` starts the mcpkit server, warms it up, attaches ``py-spy record``
(raw collapsed stacks) and loads it: over stdio with sequential calls, over HTTP with wrk
at the first concurrency level (16). It prints the functions with the most samples:
*self* (the function was on top of the stack) and *total* (anywhere on the stack). It
does so twice per transport, with two views of "busy":

* ``busy``: every sample in which the server's thread was not idle. This includes time
  inside system calls and time runnable but waiting for a CPU (on a loaded machine a
  ``write`` that wakes the client is often preempted), so it shows wall time per layer.
* ``gil``: only samples holding the GIL, i.e. Python work; system calls release the GIL,
  so this is where the interpreter's CPU goes.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from http_bench import HttpServer, LoadPlan, load, open_session
from stdio_bench import WARMUP_CALLS, StdioServer, cold_start, sequential, warm_up
from subjects import ServerSpec
from suite import SuiteConfig
from wire import Dialect

__all__ = ["profile_http", "profile_sequential", "summarize_collapsed"]


def _function(frame: str) -> str:
    """``name (path/to/file.py:123)`` -> ``name (to/file.py)``: lines merged per function."""
    name, _, location = frame.partition(" (")
    path = location.rstrip(")").rsplit(":", 1)[0]
    parts = path.split("/")
    short = "/".join(parts[-2:]) if len(parts) > 1 else path
    return f"{name} ({short})" if location else name


def summarize_collapsed(text: str, top: int = 25) -> dict[str, Any]:
    """Self and total sample shares per function from py-spy's raw (collapsed) output."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in text.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_function(frame) for frame in stack.split(";")]
        samples += count
        own[frames[-1]] += count
        for function in set(frames):
            total[function] += count
    if not samples:
        return {"samples": 0, "self": [], "total": []}

    def share(counter: Counter[str]) -> list[tuple[str, float]]:
        # Frames on (nearly) every stack are the entry points: asyncio.run, main, ...
        ranked = ((name, n) for name, n in counter.most_common() if n < samples * 0.99)
        return [(name, n / samples * 100) for name, n in ranked][:top]

    return {"samples": samples, "self": share(own), "total": share(total)}


def _spy(py_spy: Path, pid: int, seconds: float, output: Path, gil: bool, rate: int) -> Any:
    """Start ``py-spy record`` on ``pid`` for ``seconds`` (raw collapsed stacks)."""
    return subprocess.Popen(
        [
            str(py_spy),
            "record",
            "--pid",
            str(pid),
            "--rate",
            str(rate),
            "--format",
            "raw",
            "--output",
            str(output),
            "--duration",
            str(max(1, round(seconds))),
            *(["--gil"] if gil else []),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _stop(spy: Any) -> None:
    if spy.poll() is None:
        spy.kill()
        spy.wait()


def _finish_spy(spy: Any, seconds: float, output: Path) -> dict[str, Any]:
    """Wait for py-spy and summarise what it wrote."""
    try:
        _, spy_err = spy.communicate(timeout=seconds + 30)
    finally:
        _stop(spy)
    if spy.returncode != 0 or not output.exists():
        raise RuntimeError(f"py-spy failed ({spy.returncode}): {spy_err.decode()[-2000:]}")
    return summarize_collapsed(output.read_text())


def profile_sequential(
    spec: ServerSpec,
    dialect: Dialect,
    py_spy: Path,
    seconds: float,
    output: Path,
    *,
    gil: bool = False,
    rate: int = 500,
) -> dict[str, Any]:
    """Profile ``spec`` for ``seconds`` of sequential stdio calls; raw stacks to ``output``."""
    with (
        tempfile.TemporaryFile() as stderr,
        StdioServer(spec.name, spec.stdio, stderr, env=spec.env) as server,
    ):
        cold_start(server, dialect)
        next_id = warm_up(server, dialect, 1, WARMUP_CALLS)
        spy = _spy(py_spy, server.pid, seconds, output, gil, rate)
        try:
            phase, _ = sequential(server, dialect, seconds + 1.5, next_id)
        except BaseException:
            _stop(spy)
            raise
        summary = _finish_spy(spy, seconds, output)
    summary["calls_per_second"] = phase.calls_per_second
    summary["server_cpu_per_call_us"] = phase.server_cpu_per_call_us
    return summary


def profile_http(
    spec: ServerSpec,
    dialect: Dialect,
    py_spy: Path,
    config: SuiteConfig,
    connections: int,
    output: Path,
    *,
    gil: bool = False,
    rate: int = 500,
) -> dict[str, Any]:
    """Profile ``spec``'s HTTP server under wrk with ``connections`` connections."""
    seconds = max(5, config.http_seconds)
    plan = LoadPlan(
        wrk=config.wrk,
        threads=config.wrk_threads,
        seconds=seconds + 2,
        client_cpu=config.client_cpu,
        timeout=config.timeout,
    )
    with (
        tempfile.TemporaryFile() as stderr,
        HttpServer(
            spec.name, spec.http_command, stderr, env=spec.env, cpu=config.server_cpu
        ) as server,
    ):
        session = open_session(server, dialect)
        load(server, dialect, session, plan, connections, 1)
        spy = _spy(py_spy, server.pid, seconds, output, gil, rate)
        try:
            phase = load(server, dialect, session, plan, connections)
        except BaseException:
            _stop(spy)
            raise
        summary = _finish_spy(spy, seconds, output)
    summary["calls_per_second"] = phase.wrk.requests_per_second
    summary["server_cpu_per_call_us"] = phase.server_cpu_per_request_us
    return summary
