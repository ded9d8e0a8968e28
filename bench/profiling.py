"""Where the subject's time goes under sequential load: py-spy, summarised.

``run.py --profile`` starts the mcpkit server, warms it up, attaches ``py-spy record``
(raw collapsed stacks) for the length of a sequential phase and prints the functions with
the most samples: *self* (the function was on top of the stack) and *total* (anywhere on
the stack). It does so twice, with two views of "busy":

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

from stdio_bench import WARMUP_CALLS, StdioServer, cold_start, sequential, warm_up
from targets import ServerSpec
from wire import Dialect

__all__ = ["profile_sequential", "summarize_collapsed"]


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
    """Profile ``spec`` for ``seconds`` of sequential calls; write the raw stacks to ``output``."""
    with (
        tempfile.TemporaryFile() as stderr,
        StdioServer(spec.name, spec.command, stderr, env=spec.env) as server,
    ):
        cold_start(server, dialect)
        next_id = warm_up(server, dialect, 1, WARMUP_CALLS)
        spy = subprocess.Popen(
            [
                str(py_spy),
                "record",
                "--pid",
                str(server.pid),
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
        try:
            phase, _ = sequential(server, dialect, seconds + 1.5, next_id)
            _, spy_err = spy.communicate(timeout=seconds + 30)
        finally:
            if spy.poll() is None:
                spy.kill()
                spy.wait()
        if spy.returncode != 0 or not output.exists():
            raise RuntimeError(f"py-spy failed ({spy.returncode}): {spy_err.decode()[-2000:]}")
    summary = summarize_collapsed(output.read_text())
    summary["calls_per_second"] = phase.calls_per_second
    summary["server_cpu_per_call_us"] = phase.server_cpu_per_call_us
    return summary
