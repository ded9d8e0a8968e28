"""Interleaved rounds: A B C, A B C, ... so drift on a shared machine hits every server.

Within a round each server gets, in turn: ``cold`` fresh spawns whose opening exchange is
timed (the last of them goes on to the load phases), a short untimed warm-up, the
sequential phase, the pipelined phase, and a reading of its peak RSS. Every spawn is
stopped (stdin closed, then SIGTERM, then SIGKILL) before the next server starts, so
servers never compete with each other for the two cores.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stdio_bench import (
    WARMUP_CALLS,
    BenchFailure,
    StdioServer,
    cold_start,
    pipelined,
    sequential,
    warm_up,
)
from targets import ServerSpec
from wire import Dialect

METRICS: tuple[str, ...] = (
    "cold_start_ms",
    "seq_calls_per_s",
    "seq_p50_us",
    "seq_p99_us",
    "seq_server_cpu_us",
    "seq_client_cpu_us",
    "pipe_calls_per_s",
    "pipe_server_cpu_us",
    "pipe_client_cpu_us",
    "peak_rss_mb",
)

__all__ = ["METRICS", "SuiteConfig", "run_rounds"]


@dataclass(frozen=True)
class SuiteConfig:
    rounds: int = 5
    seconds: float = 2.0
    cold: int = 3
    depth: int = 64
    timeout: float = 20.0


@dataclass
class ServerSamples:
    """Every sample one server produced, metric by metric, plus its exit codes."""

    spec: ServerSpec
    samples: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METRICS})
    exit_codes: list[int | None] = field(default_factory=list)

    def add(self, metric: str, value: float) -> None:
        self.samples[metric].append(value)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": list(self.spec.command),
            "description": self.spec.description,
            "samples": self.samples,
            "exit_codes": self.exit_codes,
        }


def _spawn_cold(
    spec: ServerSpec, dialect: Dialect, config: SuiteConfig
) -> tuple[float, int | None]:
    with (
        tempfile.TemporaryFile() as stderr,
        StdioServer(
            spec.name, spec.command, stderr, timeout=config.timeout, env=spec.env
        ) as server,
    ):
        elapsed = cold_start(server, dialect)
        code = server.close()
    return elapsed, code


def _one_server(samples: ServerSamples, dialect: Dialect, config: SuiteConfig) -> dict[str, float]:
    """One server's turn in a round; returns this turn's figures for the progress line."""
    spec = samples.spec
    for _ in range(config.cold - 1):
        elapsed, code = _spawn_cold(spec, dialect, config)
        samples.add("cold_start_ms", elapsed * 1000)
        samples.exit_codes.append(code)
    with (
        tempfile.TemporaryFile() as stderr,
        StdioServer(
            spec.name, spec.command, stderr, timeout=config.timeout, env=spec.env
        ) as server,
    ):
        elapsed = cold_start(server, dialect)
        next_id = warm_up(server, dialect, 1, WARMUP_CALLS)
        seq, next_id = sequential(server, dialect, config.seconds, next_id)
        pipe, next_id = pipelined(server, dialect, config.seconds, next_id, config.depth)
        rss = server.peak_rss_bytes()
        code = server.close()
        if code != 0:
            raise server.fail(f"exit status {code} after end of input (expected 0)")
    turn = {
        "cold_start_ms": elapsed * 1000,
        "seq_calls_per_s": seq.calls_per_second,
        "seq_p50_us": seq.latency_percentile_us(50),
        "seq_p99_us": seq.latency_percentile_us(99),
        "seq_server_cpu_us": seq.server_cpu_per_call_us,
        "seq_client_cpu_us": seq.client_cpu_per_call_us,
        "pipe_calls_per_s": pipe.calls_per_second,
        "pipe_server_cpu_us": pipe.server_cpu_per_call_us,
        "pipe_client_cpu_us": pipe.client_cpu_per_call_us,
        "peak_rss_mb": rss / 2**20,
    }
    for metric, value in turn.items():
        samples.add(metric, value)
    samples.exit_codes.append(code)
    return turn


def prime(specs: list[ServerSpec], dialect_for: Callable[[ServerSpec], Dialect]) -> None:
    """One untimed spawn of each server: bytecode compiled, files in the page cache."""
    for spec in specs:
        _spawn_cold(spec, dialect_for(spec), SuiteConfig())


def run_rounds(
    specs: list[ServerSpec],
    dialect_for: Callable[[ServerSpec], Dialect],
    config: SuiteConfig,
    progress: Callable[[int, str, dict[str, float]], None],
) -> dict[str, ServerSamples]:
    """All rounds, interleaved; a failing server stops the run with a BenchFailure."""
    results = {spec.name: ServerSamples(spec) for spec in specs}
    prime(specs, dialect_for)
    for round_index in range(config.rounds):
        for spec in specs:
            try:
                turn = _one_server(results[spec.name], dialect_for(spec), config)
            except OSError as exc:
                raise BenchFailure(f"{spec.name}: {exc}") from exc
            progress(round_index, spec.name, turn)
    return results
