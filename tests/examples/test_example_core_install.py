"""The examples need only the core dependencies (issue 2 item 1: ``make run`` installs
``mcpkit`` without extras on a fresh machine).

The optional packages of the ``http`` and ``pydantic`` extras are made unimportable in
the child, which then runs the example exactly as ``python examples/<name>.py`` would.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from transports.wire import EXAMPLES, call, decode_line, encode, text_of

EXTRAS = ("httpx", "uvicorn", "starlette", "pydantic")

WITHOUT_EXTRAS = (
    "import runpy, sys\n"
    f"for name in {EXTRAS!r}:\n"
    "    sys.modules[name] = None\n"
    "sys.argv = [sys.argv[1]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


@pytest.mark.parametrize(
    ("example", "tool", "arguments", "text"),
    [
        ("notes_server.py", "read_note", {"title": "todo"}, "Review the practice fixes."),
        ("calculator_server.py", "add", {"a": 2, "b": 3}, "5"),
    ],
)
def test_an_example_server_runs_without_the_optional_extras(
    example: str, tool: str, arguments: dict[str, object], text: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS, str(EXAMPLES / example)],
        input=encode(call(1, tool, arguments)),
        capture_output=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-1500:]
    assert text_of(decode_line(done.stdout)) == text
