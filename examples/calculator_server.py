"""A calculator server over stdio: ``add``, ``boom`` and ``forecast``.

Used by the tests and by ``make bench`` (the ``add`` round trip).
"""

from __future__ import annotations

from typing import Literal

from mcpkit import Server, ToolError

server = Server("calculator", "1.0.0")


@server.tool
async def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@server.tool
async def boom() -> str:
    """Always fails, to show how a tool error reaches the model."""
    raise ToolError("city not found")


@server.tool
async def forecast(location: str, days: int = 1, units: Literal["c", "f"] = "c") -> str:
    """A made-up weather forecast.

    Args:
        location: A city name.
        days: How many days ahead.
        units: Degrees Celsius ("c") or Fahrenheit ("f").
    """
    degrees = 21 if units == "c" else 70
    return f"{location}: {degrees}°{units.upper()} for the next {days} day(s)"


if __name__ == "__main__":
    server.run()
