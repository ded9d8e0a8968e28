"""The goals of issues 2 and 8, judged on one run's figures.

Each goal is a ratio of medians from the same run (so the machine's drift cancels), or
for the protocol core an absolute rate. Stdio and HTTP goals are judged on the modern
era (2026-07-28); the legacy sections are reported alongside, not judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stats import Summary, ratio

Tables = dict[str, dict[str, dict[str, Summary]]]
"""section key -> server -> metric -> Summary."""
Measure = Callable[[Tables, dict[str, float]], float | None]

SUBJECT = "mcpkit"
CORE_CASE = "parse + serialize (request in, response out)"

__all__ = ["CORE_CASE", "Goal", "Tables", "format_goals", "goals"]


@dataclass(frozen=True)
class Goal:
    """One goal from an issue."""

    issue: str
    text: str
    measure: Measure
    passes: Callable[[float], bool]
    unit: str = "x"

    def judge(self, tables: Tables, core: dict[str, float]) -> dict[str, Any]:
        value = self.measure(tables, core)
        verdict = "not measured" if value is None else "met" if self.passes(value) else "MISSED"
        return {
            "issue": self.issue,
            "goal": self.text,
            "value": value,
            "unit": self.unit,
            "verdict": verdict,
        }


def _ratio(section: str, metric: str, other: str) -> Measure:
    def measure(tables: Tables, core: dict[str, float]) -> float | None:
        table = tables.get(section, {})
        if SUBJECT not in table or other not in table:
            return None
        return ratio(table[SUBJECT].get(metric), table[other].get(metric))

    return measure


def _core_rate(case: str) -> Measure:
    def measure(tables: Tables, core: dict[str, float]) -> float | None:
        return core.get(case)

    return measure


def goals() -> list[Goal]:
    """Issue 2's stdio goal and every goal of issue 8, in the issue's order."""
    stdio, http = "stdio modern", "http modern"
    return [
        Goal(
            "#2",
            "stdio sequential >= 5x official",
            _ratio(stdio, "seq_calls_per_s", "official"),
            lambda v: v >= 5,
        ),
        Goal(
            "#8",
            "stdio sequential >= 8x official",
            _ratio(stdio, "seq_calls_per_s", "official"),
            lambda v: v >= 8,
        ),
        Goal(
            "#8",
            "stdio sequential within 2x of floor",
            _ratio(stdio, "seq_calls_per_s", "floor"),
            lambda v: v >= 0.5,
        ),
        Goal(
            "#8",
            "stdio pipelined (64 in flight) >= 40x official",
            _ratio(stdio, "pipe_calls_per_s", "official"),
            lambda v: v >= 40,
        ),
        Goal(
            "#8",
            "HTTP concurrency 16, 1 uvicorn worker >= 8x official",
            _ratio(http, "c16_rps", "official"),
            lambda v: v >= 8,
        ),
        Goal(
            "#8",
            "cold start <= 1/4 of official",
            _ratio(stdio, "cold_start_ms", "official"),
            lambda v: v <= 0.25,
        ),
        Goal(
            "#8",
            "peak RSS <= 1/2 of official",
            _ratio(stdio, "peak_rss_mb", "official"),
            lambda v: v <= 0.5,
        ),
        Goal(
            "#8",
            "protocol core >= 200,000 msgs/s parsed and serialized",
            _core_rate(CORE_CASE),
            lambda v: v >= 200_000,
            unit="/s",
        ),
    ]


def _shown(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:,.0f}{unit}"


def format_goals(judged: list[dict[str, Any]]) -> list[str]:
    """The goals as aligned lines: issue, goal, this run's value, verdict."""
    rows = [["issue", "goal", "this run", "verdict"]]
    rows += [
        [item["issue"], item["goal"], _shown(item["value"], item["unit"]), item["verdict"]]
        for item in judged
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return [
        "  ".join(
            [row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2].rjust(widths[2]), row[3]]
        )
        for row in rows
    ]
