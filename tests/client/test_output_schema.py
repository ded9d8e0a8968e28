"""Structured tool results are checked against the tool's ``outputSchema`` (spec
``server/tools.mdx`` §Output Schema) with the bounded, never-fetching validator
(``basic/index.mdx`` §$ref Resolution, §Composition-Keyword Resource Use)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcpkit import Client
from mcpkit.client import ServerMisbehaved

Peer = Callable[..., list[str]]


async def test_structured_content_matching_the_output_schema_is_accepted(peer: Peer) -> None:
    async with Client.stdio(peer(), mode="modern") as client:
        await client.list_tools()
        assert (await client.call_tool("structured", {"ok": True})).structured == {"n": 1}


async def test_structured_content_breaking_the_output_schema_is_refused(peer: Peer) -> None:
    async with Client.stdio(peer(), mode="modern") as client:
        await client.list_tools()
        with pytest.raises(ServerMisbehaved, match="outputSchema"):
            await client.call_tool("structured", {"ok": False})


async def test_an_output_schema_with_a_network_ref_is_rejected_not_fetched(peer: Peer) -> None:
    async with Client.stdio(peer(), mode="modern") as client:
        await client.list_tools()
        with pytest.raises(ServerMisbehaved, match="unusable outputSchema"):
            await client.call_tool("remote")


async def test_validation_can_be_switched_off(peer: Peer) -> None:
    async with Client.stdio(peer(), mode="modern", validate_output=False) as client:
        await client.list_tools()
        assert (await client.call_tool("structured", {"ok": False})).structured == {"n": "one"}
