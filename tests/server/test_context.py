"""The one Context: progress, logging, cancellation, who is asking
(``basic/patterns/progress.mdx``, ``server/utilities/logging.mdx``,
``basic/patterns/cancellation.mdx``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import Context, Server

from .wire import INVALID_PARAMS, Direct, memory_peer


def reporting() -> Server:
    server = Server("reporting")

    @server.tool
    async def steps(ctx: Context) -> str:
        await ctx.report_progress(0, 3)
        await ctx.report_progress(1.5, 3, "halfway")
        await ctx.report_progress(3)
        return "done"

    @server.tool
    async def backwards(ctx: Context) -> str:
        await ctx.report_progress(2)
        await ctx.report_progress(1)
        return "unreachable"

    @server.tool
    async def chatty(ctx: Context) -> str:
        for level in ("debug", "info", "warning", "error", "emergency"):
            await ctx.log(level, {"level": level}, logger="chatty")
        return "logged"

    return server


async def test_progress_goes_out_with_the_request_token() -> None:
    reply = await Direct(reporting()).tool("steps", {}, progress="tok-1")
    assert reply.text == "done"
    assert [n["params"] for n in reply.notifications] == [
        {"progressToken": "tok-1", "progress": 0, "total": 3},
        {"progressToken": "tok-1", "progress": 1.5, "total": 3, "message": "halfway"},
        {"progressToken": "tok-1", "progress": 3},
    ]
    assert {n["method"] for n in reply.notifications} == {"notifications/progress"}


async def test_no_progress_is_sent_without_a_token() -> None:
    reply = await Direct(reporting()).tool("steps", {})
    assert reply.text == "done"
    assert reply.notifications == []


async def test_progress_that_does_not_increase_is_a_tool_error() -> None:
    reply = await Direct(reporting()).tool("backwards", {}, progress=7)
    assert reply.complete["isError"] is True
    assert "increase" in reply.complete["content"][0]["text"]
    assert len(reply.notifications) == 1


async def test_no_log_message_is_sent_without_a_log_level() -> None:
    reply = await Direct(reporting()).tool("chatty", {})
    assert reply.text == "logged"
    assert reply.notifications == []


async def test_log_messages_are_filtered_by_the_request_log_level() -> None:
    reply = await Direct(reporting()).tool("chatty", {}, log_level="warning")
    assert [n["params"] for n in reply.notifications] == [
        {"level": level, "data": {"level": level}, "logger": "chatty"}
        for level in ("warning", "error", "emergency")
    ]


async def test_an_unknown_log_level_is_invalid_params() -> None:
    reply = await Direct(reporting()).tool("chatty", {}, log_level="loud")
    assert reply.error["code"] == INVALID_PARAMS


async def test_nothing_is_sent_for_a_request_after_its_answer() -> None:
    server = Server("late")
    keep: list[Context] = []

    @server.tool
    async def leaks(ctx: Context) -> str:
        keep.append(ctx)
        return "answered"

    reply = await Direct(server).tool("leaks", {}, progress="p", log_level="debug")
    await keep[0].report_progress(1)
    await keep[0].info("too late")
    assert reply.notifications == []


async def test_cancellation_reaches_the_handler_and_nothing_is_sent_after() -> None:
    server = Server("cancel")
    started = asyncio.Event()
    outcome: list[str] = []

    @server.tool
    async def forever() -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        return "never"

    async with memory_peer(server) as peer:
        await peer.request(41, "tools/call", {"name": "forever"})
        await asyncio.wait_for(started.wait(), 5)
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 41, "reason": "user"},
            }
        )
        assert await peer.quiet(0.3) == []
        assert outcome == ["cancelled"]
        reply = await peer.call(42, "tools/list")
        assert reply["result"]["tools"][0]["name"] == "forever"


async def test_the_context_tells_who_asks_and_what_they_support() -> None:
    server = Server("who")
    seen: dict[str, Any] = {}

    @server.tool
    def inspect(ctx: Context) -> str:
        seen.update(
            info=ctx.client_info,
            caps=ctx.client_capabilities,
            url=ctx.client_supports("elicitation", "url"),
            form=ctx.client_supports("elicitation", "form"),
            principal=ctx.principal,
            request=ctx.request_id,
            method=ctx.method,
        )
        return ""

    await Direct(server, principal={"sub": "u1"}).tool(
        "inspect",
        {},
        capabilities={"elicitation": {}},
        client_info={"name": "host", "version": "9"},
    )
    assert seen == {
        "info": {"name": "host", "version": "9"},
        "caps": {"elicitation": {}},
        "url": False,
        "form": True,
        "principal": {"sub": "u1"},
        "request": 1,
        "method": "tools/call",
    }


async def test_a_handler_can_require_a_capability_itself() -> None:
    server = Server("s")

    @server.tool
    def picky(ctx: Context) -> str:
        ctx.require({"elicitation": {"url": {}}})
        return "fine"

    direct = Direct(server)
    refused = await direct.tool("picky", {}, capabilities={"elicitation": {}})
    assert refused.error["code"] == -32021
    assert refused.error["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    ok = await direct.tool("picky", {}, capabilities={"elicitation": {"url": {}}})
    assert ok.text == "fine"


@pytest.mark.parametrize(
    ("meta_value", "message"),
    [
        ({}, "Missing required _meta field io.modelcontextprotocol/protocolVersion"),
        (
            {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
            "Missing required _meta field io.modelcontextprotocol/clientCapabilities",
        ),
    ],
)
async def test_requests_without_the_required_meta_are_invalid_params(
    meta_value: dict[str, Any], message: str
) -> None:
    reply = await Direct(reporting()).call("tools/list", raw_meta=meta_value or {"x": 1})
    assert reply.error == {"code": INVALID_PARAMS, "message": message}
