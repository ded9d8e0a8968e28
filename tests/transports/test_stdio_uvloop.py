"""The stdio server runs on uvloop as well as on asyncio's own loop.

uvloop's pipe transports differ from asyncio's (no ``max_size``; they close the
descriptor they were given), and a server must neither crash on them nor lose stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys

from transports.wire import EXAMPLES, META

SCRIPT = f"""
import asyncio, runpy, sys
import uvloop
asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
sys.argv = ["calculator_server.py"]
runpy.run_path({str(EXAMPLES / "calculator_server.py")!r}, run_name="__main__")
"""


def test_a_stdio_server_on_uvloop_answers_and_exits_cleanly() -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": i, "b": 1}, "_meta": META},
        }
        for i in range(1, 4)
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], input=payload, capture_output=True, timeout=30
    )
    assert result.returncode == 0, result.stderr.decode()
    assert b"Traceback" not in result.stderr
    answers = {
        m["id"]: m["result"]["content"][0]["text"]
        for m in map(json.loads, result.stdout.splitlines())
    }
    assert answers == {1: "2", 2: "3", 3: "4"}
