"""``examples/notes_client.py``, what ``make run`` runs, prints the demo session.

Issue 2 item 1: the server's discovery, its tool list, one successful call and one
failing call. The output is read section by section as the JSON it prints.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from transports.wire import EXAMPLES, PROTOCOL_VERSION, ROOT, SERVER_INFO

HEADINGS = [
    "server/discover",
    "tools/list",
    "tools/call read_note(title='standup')",
    "tools/call read_note(title='stand-up')",
]


def run_demo(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "notes_client.py")],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )


def sections(stdout: str) -> dict[str, Any]:
    """``== heading`` followed by a JSON document, for each section."""
    found: dict[str, Any] = {}
    for chunk in stdout.split("== ")[1:]:
        heading, _, body = chunk.partition("\n")
        found[heading] = json.loads(body)
    return found


def test_the_demo_prints_discovery_tools_and_two_calls() -> None:
    done = run_demo(ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("== server/discover\n")
    shown = sections(done.stdout)
    assert list(shown) == HEADINGS

    discover = shown["server/discover"]
    assert PROTOCOL_VERSION in discover["supportedVersions"]
    assert discover["_meta"][SERVER_INFO]["name"] == "notes"

    assert [tool["name"] for tool in shown["tools/list"]] == ["read_note"]

    ok = shown[HEADINGS[2]]
    assert ok["content"] == [{"type": "text", "text": "Demo the MCP server at 10:00."}]
    assert ok.get("isError", False) is False

    failed = shown[HEADINGS[3]]
    assert failed["isError"] is True
    assert failed["content"] == [
        {"type": "text", "text": "No note called 'stand-up'. Notes: ['standup', 'todo']"}
    ]


def test_the_demo_runs_from_any_directory(tmp_path: Path) -> None:
    done = run_demo(tmp_path)
    assert done.returncode == 0, done.stderr
    assert list(sections(done.stdout)) == HEADINGS
