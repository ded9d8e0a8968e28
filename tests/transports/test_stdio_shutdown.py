"""The server exits promptly on end-of-file (spec ``basic/transports/stdio.mdx`` §Shutdown).

With nothing in flight it exits within 1 s of stdin closing; a request in flight still
gets its answer within the grace period; a handler that outlives the grace period, even
a sync one blocked in ``time.sleep``, does not keep the process alive.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from transports.wire import TOOL_SERVER, call, decode_line, encode, spawn, text_of


async def test_the_server_exits_within_a_second_of_stdin_closing() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.probe()
        closed = time.monotonic()
        await wire.close_stdin()
        assert await wire.wait_exit(timeout=1.0) == 0
        assert time.monotonic() - closed < 1.0


async def test_a_request_in_flight_at_eof_still_gets_its_answer_then_the_server_exits() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.probe()
        await wire.send(call("late", "slow", {"seconds": 0.4}))
        await wire.close_stdin()
        closed = time.monotonic()
        messages = await wire.read_to_eof()
        assert [m["id"] for m in messages] == ["late"]
        assert text_of(messages[0]) == "slow"
        assert await wire.wait_exit(timeout=1.0) == 0
        assert time.monotonic() - closed < 1.4


async def test_a_sync_tool_in_flight_at_eof_still_gets_its_answer() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.send(call("late", "block", {"seconds": 0.4}))
        await wire.wait_stderr("blocking")
        await wire.close_stdin()
        messages = await wire.read_to_eof()
        assert [m["id"] for m in messages] == ["late"]
        assert await wire.wait_exit(timeout=1.0) == 0


async def test_an_async_handler_outliving_the_grace_period_is_cancelled_and_unanswered() -> None:
    async with spawn(TOOL_SERVER, "--grace", "0.3") as wire:
        await wire.send(call("long", "wait_for_cancel", {"tag": "long"}))
        await wire.wait_stderr("started long")
        closed = time.monotonic()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit(timeout=1.3) == 0
        assert time.monotonic() - closed < 1.3
        assert "cancelled long" in wire.stderr


async def test_a_blocked_sync_tool_does_not_keep_the_process_alive_after_eof() -> None:
    async with spawn(TOOL_SERVER, "--grace", "0.3") as wire:
        await wire.send(call("stuck", "block", {"seconds": 30}))
        await wire.wait_stderr("blocking")
        closed = time.monotonic()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit(timeout=1.3) == 0
        assert time.monotonic() - closed < 1.3


async def test_a_last_request_without_a_newline_is_answered_at_eof() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.send_raw(encode(call("last", "echo", {"text": "tail"})).rstrip(b"\n"))
        await wire.close_stdin()
        messages = await wire.read_to_eof()
        assert [m["id"] for m in messages] == ["last"]
        assert text_of(messages[0]) == "tail"


def test_a_server_reading_requests_from_a_file_answers_them_and_exits(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        encode(call(1, "echo", {"text": "one"})) + encode(call(2, "echo", {"text": "two"}))
    )
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, str(TOOL_SERVER)],
            stdin=stdin,
            capture_output=True,
            timeout=10,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    replies = [decode_line(line) for line in done.stdout.splitlines(keepends=True)]
    assert sorted((r["id"], text_of(r)) for r in replies) == [(1, "one"), (2, "two")]


def test_a_server_whose_reader_went_away_keeps_going_and_exits_at_eof() -> None:
    server = subprocess.Popen(
        [sys.executable, str(TOOL_SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stdin is not None
        assert server.stdout is not None
        server.stdin.write(encode(call(1, "echo", {"text": "one"})))
        server.stdin.flush()
        assert text_of(decode_line(server.stdout.readline())) == "one"
        # Nobody reads the replies any more: writing them fails with EPIPE.
        server.stdout.close()
        for n in range(2, 5):
            server.stdin.write(encode(call(n, "echo", {"text": "lost"})))
        server.stdin.close()
        assert server.wait(timeout=5) == 0
        assert server.stderr is not None
        assert b"Traceback" not in server.stderr.read()
    finally:
        server.kill()
        server.wait(timeout=5)
        for stream in (server.stdin, server.stdout, server.stderr):
            if stream is not None:
                stream.close()
