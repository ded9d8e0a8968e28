"""Interleaved rounds: A B C, A B C, ... so drift on a shared machine hits every server.

A run is a list of *sections* (a transport and an era: ``stdio modern``, ``stdio
legacy``, ``http modern``, ``http legacy``). Before the rounds, every server is asked
once in every section whether it answers right (an untimed spawn that also primes
bytecode caches and the page cache); a server that does not speak a legacy era is left
out of that section with the reason, shown as a "not available" row. A modern-era
failure is not an absence but a bug, and stops the run.

Then each round runs every section, and within a section every available server in
turn:

* stdio: ``cold`` fresh spawns whose opening exchange is timed (the last of them goes on
  to the load phases), a short untimed warm-up, the sequential phase, the pipelined
  phase, and a reading of its peak RSS;
* HTTP: a fresh server, its session opened by hand (readiness), an untimed wrk warm-up,
  wrk with one connection (sequential) and at each concurrency level, then its peak RSS.

Every spawn is stopped before the next server starts, so servers never compete with
each other for the cores. A failure after the probe (a wrong answer, an error, silence)
stops the run.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from http_bench import HttpServer, LoadPlan, load, open_session
from process import BenchFailure
from stdio_bench import (
    WARMUP_CALLS,
    StdioServer,
    cold_start,
    pipelined,
    sequential,
    warm_up,
)
from subjects import ServerSpec
from wire import Dialect

STDIO_METRICS: tuple[str, ...] = (
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
HTTP_PHASE_METRICS: tuple[str, ...] = ("rps", "p50_us", "p99_us", "server_cpu_us", "client_cpu_us")

__all__ = [
    "HTTP_PHASE_METRICS",
    "STDIO_METRICS",
    "Outcome",
    "Section",
    "SuiteConfig",
    "http_phase",
    "run_rounds",
]


def http_phase(connections: int) -> str:
    """The metric prefix of an HTTP phase: ``seq`` for one connection, else ``c<N>``."""
    return "seq" if connections == 1 else f"c{connections}"


@dataclass(frozen=True)
class Section:
    """One transport in one era."""

    transport: str
    era: str

    @property
    def key(self) -> str:
        return f"{self.transport} {self.era}"


@dataclass(frozen=True)
class SuiteConfig:
    rounds: int = 5
    seconds: float = 2.0
    cold: int = 3
    depth: int = 64
    timeout: float = 20.0
    concurrency: tuple[int, ...] = (16, 64)
    http_seconds: int = 2
    warmup_seconds: int = 1
    wrk: str = "wrk"
    wrk_threads: int = 2
    server_cpu: int | None = None
    client_cpu: int | None = None
    pin_stdio: bool = False

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "concurrency": list(self.concurrency)}


@dataclass
class ServerSamples:
    """Every sample one server produced in one section, metric by metric."""

    spec: ServerSpec
    samples: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    exit_codes: list[int | None] = field(default_factory=list)

    def add(self, metric: str, value: float) -> None:
        self.samples[metric].append(value)

    def to_json(self) -> dict[str, Any]:
        return {
            "description": self.spec.description,
            "samples": dict(self.samples),
            "exit_codes": self.exit_codes,
        }


@dataclass
class Outcome:
    """section key -> server -> samples; and section key -> server -> why it is absent."""

    results: dict[str, dict[str, ServerSamples]] = field(default_factory=dict)
    unavailable: dict[str, dict[str, str]] = field(default_factory=dict)


# -- stdio ------------------------------------------------------------------------------


def _stdio_server(spec: ServerSpec, stderr: Any, config: SuiteConfig) -> StdioServer:
    return StdioServer(
        spec.name,
        spec.stdio,
        stderr,
        timeout=config.timeout,
        env=spec.env,
        cpu=config.server_cpu if config.pin_stdio else None,
    )


def _spawn_cold(
    spec: ServerSpec, dialect: Dialect, config: SuiteConfig, calls: int = 0
) -> tuple[float, int | None]:
    """One spawn timed to its opening answer, then ``calls`` checked calls, then stop."""
    with tempfile.TemporaryFile() as stderr, _stdio_server(spec, stderr, config) as server:
        elapsed = cold_start(server, dialect)
        if calls:
            warm_up(server, dialect, 1, calls)
        code = server.close()
    return elapsed, code


def _stdio_turn(samples: ServerSamples, dialect: Dialect, config: SuiteConfig) -> dict[str, float]:
    """One server's stdio turn in a round; returns this turn's figures."""
    spec = samples.spec
    for _ in range(config.cold - 1):
        elapsed, code = _spawn_cold(spec, dialect, config)
        samples.add("cold_start_ms", elapsed * 1000)
        samples.exit_codes.append(code)
    with tempfile.TemporaryFile() as stderr, _stdio_server(spec, stderr, config) as server:
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


# -- HTTP -------------------------------------------------------------------------------


def _http_server(spec: ServerSpec, stderr: Any, config: SuiteConfig) -> HttpServer:
    return HttpServer(
        spec.name,
        spec.http_command,
        stderr,
        timeout=config.timeout,
        env=spec.env,
        cpu=config.server_cpu,
    )


def _plan(config: SuiteConfig) -> LoadPlan:
    return LoadPlan(
        wrk=config.wrk,
        threads=config.wrk_threads,
        seconds=config.http_seconds,
        client_cpu=config.client_cpu,
        timeout=config.timeout,
    )


def _http_turn(samples: ServerSamples, dialect: Dialect, config: SuiteConfig) -> dict[str, float]:
    """One server's HTTP turn in a round; returns this turn's figures."""
    spec, plan = samples.spec, _plan(config)
    turn: dict[str, float] = {}
    with tempfile.TemporaryFile() as stderr, _http_server(spec, stderr, config) as server:
        session = open_session(server, dialect)
        turn["ready_ms"] = session.ready_seconds * 1000
        load(server, dialect, session, plan, max(config.concurrency), config.warmup_seconds)
        for connections in (1, *config.concurrency):
            phase = load(server, dialect, session, plan, connections)
            prefix = http_phase(connections)
            turn[f"{prefix}_rps"] = phase.wrk.requests_per_second
            turn[f"{prefix}_p50_us"] = phase.wrk.p50_us
            turn[f"{prefix}_p99_us"] = phase.wrk.p99_us
            turn[f"{prefix}_server_cpu_us"] = phase.server_cpu_per_request_us
            turn[f"{prefix}_client_cpu_us"] = phase.wrk.client_cpu_per_request_us
        turn["peak_rss_mb"] = server.peak_rss_bytes() / 2**20
        samples.exit_codes.append(server.close())
    for metric, value in turn.items():
        samples.add(metric, value)
    return turn


def _probe_http(spec: ServerSpec, dialect: Dialect, config: SuiteConfig) -> None:
    with tempfile.TemporaryFile() as stderr, _http_server(spec, stderr, config) as server:
        open_session(server, dialect)


# -- rounds -----------------------------------------------------------------------------


def _reason(name: str, failure: BaseException) -> str:
    """The first line of a failure without the server's name, short enough for a row."""
    text = str(failure).strip()
    first = text.splitlines()[0].removeprefix(f"{name}: ") if text else repr(failure)
    return first if len(first) <= 160 else first[:157] + "..."


def probe(
    sections: list[Section],
    specs: list[ServerSpec],
    dialect_for: Callable[[Section, ServerSpec], Dialect],
    config: SuiteConfig,
) -> Outcome:
    """Which server answers right in which section (module docstring)."""
    outcome = Outcome()
    for section in sections:
        present = outcome.results.setdefault(section.key, {})
        absent = outcome.unavailable.setdefault(section.key, {})
        for spec in specs:
            dialect = dialect_for(section, spec)
            try:
                if section.transport == "stdio":
                    _spawn_cold(spec, dialect, config, calls=3)
                else:
                    _probe_http(spec, dialect, config)
            except (BenchFailure, OSError) as failure:
                if section.era == "modern":
                    raise BenchFailure(f"{section.key}: {failure}") from failure
                absent[spec.name] = _reason(spec.name, failure)
                continue
            present[spec.name] = ServerSamples(spec)
    return outcome


def run_rounds(
    sections: list[Section],
    specs: list[ServerSpec],
    dialect_for: Callable[[Section, ServerSpec], Dialect],
    config: SuiteConfig,
    progress: Callable[[int, Section, str, dict[str, float]], None],
) -> Outcome:
    """Probe, then all rounds, interleaved; a failing server stops the run."""
    outcome = probe(sections, specs, dialect_for, config)
    for round_index in range(config.rounds):
        for section in sections:
            turn_of = _stdio_turn if section.transport == "stdio" else _http_turn
            for name, samples in outcome.results[section.key].items():
                try:
                    turn = turn_of(samples, dialect_for(section, samples.spec), config)
                except OSError as exc:
                    raise BenchFailure(f"{section.key} {name}: {exc}") from exc
                except BenchFailure as failure:
                    raise BenchFailure(f"{section.key} {failure}") from failure
                progress(round_index, section, name, turn)
    return outcome
