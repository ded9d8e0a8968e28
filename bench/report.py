"""The printed table, from the samples of one run.

Every cell is ``median [min-max]`` over the samples (rounds, or cold spawns); ratio
columns divide the subject's median (the first server, mcpkit) by another server's
median. For throughput a ratio above 1 means the subject is faster; for cold start,
latency, CPU and memory a ratio below 1 means it needs less. One table holds every
section (transport and era); a server a section could not measure gets a "not
available" line with the reason.
"""

from __future__ import annotations

from typing import Any

from stats import Summary, ratio, summarize

STDIO_ROWS: tuple[tuple[str, str], ...] = (
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
ERA_NAMES = {"modern": "modern 2026-07-28", "legacy": "legacy 2025-11-25"}

__all__ = ["format_core", "format_table", "http_rows", "summaries"]

Row = list[str] | str
"""A table row: aligned cells, or a line printed as it is (section titles, notes)."""


def summaries(samples: dict[str, list[float]]) -> dict[str, Summary]:
    """metric -> Summary, for every metric that has samples."""
    return {metric: summarize(values) for metric, values in samples.items() if values}


def http_rows(concurrency: tuple[int, ...]) -> list[tuple[str, str]]:
    """The HTTP rows: readiness, one block per load level, peak RSS."""
    rows = [("ready_ms", "ready (ms): spawn to first answer")]
    for connections in (1, *concurrency):
        prefix = "seq" if connections == 1 else f"c{connections}"
        title = (
            "sequential req/s (1 connection)"
            if connections == 1
            else f"concurrency {connections} req/s"
        )
        rows += [
            (f"{prefix}_rps", title),
            (f"{prefix}_p50_us", "  latency p50 (us)"),
            (f"{prefix}_p99_us", "  latency p99 (us)"),
            (f"{prefix}_server_cpu_us", "  server CPU/req (us)"),
            (f"{prefix}_client_cpu_us", "  wrk CPU/req (us)"),
        ]
    rows.append(("peak_rss_mb", "peak RSS (MB)"))
    return rows


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
    if value is None:
        return "-"
    return f"{value:.3f}x" if value < 0.1 else f"{value:.2f}x"


def _section_title(key: str, rounds: int, http_note: str) -> str:
    transport, era = key.split(" ", 1)
    name = "stdio" if transport == "stdio" else f"Streamable HTTP ({http_note})"
    return f"{name}, {ERA_NAMES.get(era, era)}: median [min-max] over {rounds} round(s)"


def format_table(
    sections: list[tuple[str, dict[str, dict[str, Summary]], dict[str, str]]],
    servers: list[str],
    *,
    depth: int,
    concurrency: tuple[int, ...],
    rounds: int,
    http_note: str,
) -> list[str]:
    """One table: a header, then per section its title, absences and metric rows.

    ``sections`` holds (section key, server -> metric -> Summary, server -> reason
    absent); ``servers`` is the column order, subject first.
    """
    subject, others = servers[0], servers[1:]
    rows: list[Row] = [["", *servers, *(f"{subject}/{other}" for other in others)]]
    for key, table, absent in sections:
        rows.append("")
        rows.append(_section_title(key, rounds, http_note))
        rows += [f"  {name}: not available ({why})" for name, why in absent.items()]
        labels = STDIO_ROWS if key.startswith("stdio") else http_rows(concurrency)
        for metric, label in labels:
            row = ["  " + label.format(depth=depth)]
            row += [_cell(table.get(name, {}).get(metric)) for name in servers]
            mine = table.get(subject, {}).get(metric)
            row += [_ratio_cell(ratio(mine, table.get(o, {}).get(metric))) for o in others]
            rows.append(row)
    return _align(rows)


def format_core(cases: list[dict[str, Any]]) -> list[str]:
    """The protocol-core table: operations per second and microseconds per operation."""
    rows: list[Row] = [["case", "msgs/s median [min-max]", "us/msg"]]
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


def _align(rows: list[Row]) -> list[str]:
    """Left-align the first column, right-align the others; plain lines pass through."""
    cells = [row for row in rows if isinstance(row, list)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = []
    for row in rows:
        if isinstance(row, str):
            lines.append(row)
            continue
        first = row[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True))
        lines.append("  ".join([first, *rest]).rstrip())
    return lines
