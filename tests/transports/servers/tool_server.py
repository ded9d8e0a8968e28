"""A stdio server with tools that probe the transport: slow, blocking, chatty, cancellable.

Run as ``python tool_server.py [--max-line N] [--grace SECONDS]``. Tools report what
happens to them on stderr (``started <tag>``, ``cancelled <tag>``) so a test can see a
handler's fate without the protocol's help.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from typing import Any

from mcpkit import Context, Server
from mcpkit.transports.stdio import run_stdio

server = Server("transport-probe", "1.0.0")


def report(event: str) -> None:
    """One line on the real stderr (fd 2), flushed at once."""
    os.write(2, f"{event}\n".encode())


@server.tool
async def echo(text: str) -> str:
    """Return the text unchanged (the liveness probe)."""
    return text


@server.tool
async def fast() -> str:
    """Answer at once."""
    return "fast"


@server.tool
async def slow(seconds: float) -> str:
    """Sleep on the event loop, then answer."""
    await asyncio.sleep(seconds)
    return "slow"


@server.tool
async def nap(nonce: str, ms: float) -> str:
    """Sleep ``ms`` milliseconds on the event loop, then return the nonce."""
    await asyncio.sleep(ms / 1000)
    return nonce


@server.tool
def block(seconds: float) -> str:
    """Block the calling thread (a sync tool) with time.sleep, then answer."""
    report("blocking")
    time.sleep(seconds)
    report("unblocked")
    return "blocked"


def _chatter() -> str:
    print("printed by a tool")
    sys.stdout.write("written to sys.stdout without a newline")
    sys.stdout.flush()
    os.write(1, b"written to fd 1\n")
    logging.getLogger("probe.tool").warning("logged by a tool")
    return "chatted"


@server.tool
async def chatter() -> str:
    """Write to stdout three ways and log, from the event loop."""
    return _chatter()


@server.tool
def sync_chatter() -> str:
    """Write to stdout three ways and log, from a worker thread."""
    return _chatter()


@server.tool
async def wait_for_cancel(tag: str) -> str:
    """Wait until cancelled; report the start and the cancellation on stderr."""
    report(f"started {tag}")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        report(f"cancelled {tag}")
        raise
    return "never cancelled"


@server.tool
async def stubborn(tag: str, ctx: Context) -> str:
    """Swallow the cancellation, then report progress, log, and return a value anyway."""
    report(f"started {tag}")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        report(f"swallowed {tag}")
    await ctx.report_progress(1.0, 1.0, "still going")
    await ctx.info("still going")
    report(f"finished {tag}")
    return "answered after cancellation"


@server.tool
def environ() -> dict[str, str]:
    """The process environment."""
    return dict(os.environ)


@server.tool
def kinds(
    a: Any = None,
    b: Any = None,
    c: Any = None,
    d: Any = None,
    e: Any = None,
    f: Any = None,
    g: Any = None,
    h: Any = None,
) -> dict[str, str]:
    """The JSON kind of each argument given, to show how a caller encoded it."""
    names = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}
    found: dict[str, Any] = {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "g": g, "h": h}
    return {
        key: names.get(type(value), type(value).__name__)
        for key, value in found.items()
        if value is not None
    }


@server.tool
def shout(size: int) -> str:
    """Write one stderr line of ``size`` bytes, then answer."""
    os.write(2, b"x" * size + b"\n")
    return "shouted"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-line", type=int, default=None)
    parser.add_argument("--grace", type=float, default=None)
    args = parser.parse_args()
    options: dict[str, Any] = {}
    if args.max_line is not None:
        options["max_line"] = args.max_line
    if args.grace is not None:
        options["shutdown_grace"] = args.grace
    logging.basicConfig(level=logging.INFO, format="log %(name)s %(levelname)s %(message)s")
    run_stdio(server, **options)


if __name__ == "__main__":
    main()
