"""The printed table and the targets, from the samples of one run.

Every cell is ``median [min-max]`` over the samples (rounds, or cold spawns); ratio
columns divide the subject's median (the first server, mcpkit) by another server's
median. For throughput a ratio above 1 means the subject is faster; for cold start,
latency, CPU and memory a ratio below 1 means it needs less.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stats import Summary, ratio, summarize

ROWS: tuple[tuple[str, str], ...] = (
    ("cold_start_ms", "cold start (ms)"),
    ("seq_calls_per_s", "sequential calls/s"),
    ("seq_p50_us", "  latency p50 (us)"),
    ("seq_p99_us", "  latency p99 (us)"),
    ("seq_server_cpu_us", "  server CPU/call (us)"),
    ("seq_client_cpu_us", "  client CPU/call (us)"),
    ("pipe_calls_per_s", "pipelined calls/s ({depth} in flight)"),
    ("pipe_server_cpu_us", "  server CPU/call (us)"),
    ("pipe_client_cpu_us", "  client CPU/call (us)"),
    ("peak_rss_mb", "peak RSS (MB)"),
)

__all__ = ["Target", "format_core", "format_stdio", "summaries", "targets"]


def summaries(samples: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, Summary]]:
    """server -> metric -> Summary, for every metric that has samples."""
    return {
        server: {metric: summarize(values) for metric, values in metrics.items() if values}
        for server, metrics in samples.items()
    }


def _number(value: float) -> str:
    """Three significant digits, thousands separated: 1,234 / 98.7 / 5.43 / 0.123."""
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _cell(summary: Summary | None) -> str:
    if summary is None:
        return "-"
    if summary.count == 1:
        return _number(summary.median)
    return f"{_number(summary.median)} [{_number(summary.low)}-{_number(summary.high)}]"


def _ratio_cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def format_stdio(
    title: str, table: dict[str, dict[str, Summary]], depth: int, subject: str
) -> list[str]:
    """The stdio table: one column per server, then subject/other ratio columns."""
    servers = list(table)
    others = [name for name in servers if name != subject]
    header = ["metric", *servers, *(f"{subject}/{other}" for other in others)]
    rows = [header]
    for metric, label in ROWS:
        row = [label.format(depth=depth)]
        row.extend(_cell(table[name].get(metric)) for name in servers)
        row.extend(
            _ratio_cell(ratio(table[subject].get(metric), table[other].get(metric)))
            for other in others
        )
        rows.append(row)
    return [title, *_align(rows)]


def format_core(cases: list[dict[str, Any]]) -> list[str]:
    """The protocol-core table: operations per second and microseconds per operation."""
    rows = [["case", "msgs/s median [min-max]", "us/msg"]]
    for case in cases:
        rate = case["ops_per_second"]
        rows.append(
            [
                case["case"],
                f"{_number(rate)} [{_number(case['low'])}-{_number(case['high'])}]",
                _number(1e6 / rate),
            ]
        )
    return _align(rows)


def _align(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        first = row[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True))
        lines.append("  ".join([first, *rest]).rstrip())
    return lines


@dataclass(frozen=True)
class Target:
    """One goal from an issue, judged on this run's figures."""

    issue: str
    goal: str
    measure: Callable[[dict[str, dict[str, Summary]], dict[str, float]], float | None]
    passes: Callable[[float], bool]
    unit: str = "x"

    def judge(self, table: dict[str, dict[str, Summary]], core: dict[str, float]) -> dict[str, Any]:
        value = self.measure(table, core)
        verdict = "not measured" if value is None else "met" if self.passes(value) else "MISSED"
        return {"issue": self.issue, "goal": self.goal, "value": value, "verdict": verdict}


def _stdio_ratio(metric: str, other: str) -> Callable[..., float | None]:
    def measure(table: dict[str, dict[str, Summary]], core: dict[str, float]) -> float | None:
        if "mcpkit" not in table or other not in table:
            return None
        return ratio(table["mcpkit"].get(metric), table[other].get(metric))

    return measure


def _core_rate(case: str) -> Callable[..., float | None]:
    def measure(table: dict[str, dict[str, Summary]], core: dict[str, float]) -> float | None:
        return core.get(case)

    return measure


def targets() -> list[Target]:
    """The goals of issue 2 (foundation) and issue 8 (performance) that stdio can judge."""
    seq, pipe = "seq_calls_per_s", "pipe_calls_per_s"
    return [
        Target(
            "#2", "stdio sequential >= 5x official", _stdio_ratio(seq, "official"), lambda v: v >= 5
        ),
        Target(
            "#8", "stdio sequential >= 8x official", _stdio_ratio(seq, "official"), lambda v: v >= 8
        ),
        Target(
            "#8",
            "stdio sequential within 2x of floor",
            _stdio_ratio(seq, "floor"),
            lambda v: v >= 0.5,
        ),
        Target(
            "#8",
            "stdio pipelined >= 40x official",
            _stdio_ratio(pipe, "official"),
            lambda v: v >= 40,
        ),
        Target(
            "#8",
            "cold start <= 1/4 of official",
            _stdio_ratio("cold_start_ms", "official"),
            lambda v: v <= 0.25,
        ),
        Target(
            "#8",
            "peak RSS <= 1/2 of official",
            _stdio_ratio("peak_rss_mb", "official"),
            lambda v: v <= 0.5,
        ),
        Target(
            "#8",
            "protocol core >= 200,000 msgs/s parsed and serialized",
            _core_rate("parse + serialize (request in, response out)"),
            lambda v: v >= 200_000,
            unit="/s",
        ),
    ]


def format_targets(judged: list[dict[str, Any]], units: list[str]) -> list[str]:
    rows = [["issue", "goal", "this run", "verdict"]]
    for item, unit in zip(judged, units, strict=True):
        value = item["value"]
        shown = "-" if value is None else f"{value:.2f}x" if unit == "x" else _number(value) + unit
        rows.append([item["issue"], item["goal"], shown, item["verdict"]])
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return [
        "  ".join(
            [row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2].rjust(widths[2]), row[3]]
        )
        for row in rows
    ]
