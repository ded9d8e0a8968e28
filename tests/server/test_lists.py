"""Pagination (``server/utilities/pagination.mdx``), cache hints (``caching.mdx``) and the
capabilities discover advertises (``server/discover.mdx``), on every list method."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcpkit import CacheHint, CachePolicy, Server

from .wire import INVALID_PARAMS, Direct

LISTS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}


def stocked(count: int = 7, **options: Any) -> Server:
    server = Server("stocked", **options)
    for index in range(count):

        def tool() -> str:
            return ""

        def prompt() -> str:
            return ""

        def resource() -> str:
            return ""

        def template(id: str) -> str:
            return id

        server.add_tool(tool, name=f"tool_{index}")
        server.add_prompt(prompt, name=f"prompt_{index}")
        server.add_resource(resource, f"test://r/{index}", name=f"r{index}")
        server.add_resource(template, f"test://t{index}/{{id}}", name=f"t{index}")
    return server


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["name"] for item in items]


@pytest.mark.parametrize(("method", "field"), LISTS.items())
async def test_every_list_pages_with_opaque_cursors(method: str, field: str) -> None:
    direct = Direct(stocked(7, page_size=3))
    pages: list[list[str]] = []
    params: dict[str, Any] = {}
    cursors: list[str] = []
    while True:
        result = (await direct.call(method, params)).complete
        pages.append(names(result[field]))
        if "nextCursor" not in result:
            break
        cursors.append(result["nextCursor"])
        params = {"cursor": result["nextCursor"]}
    assert [len(page) for page in pages] == [3, 3, 1]
    everything = (await Direct(stocked(7)).call(method)).complete
    assert "nextCursor" not in everything
    assert [name for page in pages for name in page] == names(everything[field])
    assert all(isinstance(c, str) and c for c in cursors)


@pytest.mark.parametrize("method", LISTS)
@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not base64!",
        "bm90IGpzb24",
        base64.urlsafe_b64encode(b'{"m":"other/list","o":3}').decode().rstrip("="),
        base64.urlsafe_b64encode(b'{"o":-1}').decode().rstrip("="),
        12,
        ["x"],
        "A" * 1000,
    ],
)
async def test_an_invalid_cursor_is_invalid_params(method: str, cursor: Any) -> None:
    reply = await Direct(stocked(3, page_size=2)).call(method, {"cursor": cursor})
    assert reply.error["code"] == INVALID_PARAMS
    assert reply.error["message"] == "Invalid cursor"


async def test_a_cursor_of_one_list_is_refused_by_another() -> None:
    direct = Direct(stocked(5, page_size=2))
    cursor = (await direct.call("tools/list")).complete["nextCursor"]
    assert (await direct.call("prompts/list", {"cursor": cursor})).error["code"] == INVALID_PARAMS


async def test_a_cursor_past_a_shrunken_list_gives_an_empty_last_page() -> None:
    server = stocked(5, page_size=4)
    direct = Direct(server)
    cursor = (await direct.call("tools/list")).complete["nextCursor"]
    for index in range(3):
        server.remove_tool(f"tool_{index}")
    result = (await direct.call("tools/list", {"cursor": cursor})).complete
    assert result["tools"] == []
    assert "nextCursor" not in result


CACHEABLE = ["server/discover", *LISTS]


@pytest.mark.parametrize("method", CACHEABLE)
async def test_every_cacheable_result_carries_cache_hints(method: str) -> None:
    result = (await Direct(stocked(2)).call(method)).complete
    assert result["ttlMs"] == 0
    assert result["cacheScope"] == "public"


async def test_reads_default_to_private_hints() -> None:
    result = (await Direct(stocked(1)).call("resources/read", {"uri": "test://r/0"})).complete
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


async def test_cache_hints_are_set_per_server_and_per_method() -> None:
    policy = CachePolicy(CacheHint(300_000, "public")).with_method(
        "prompts/list", CacheHint(5_000, "private")
    )
    direct = Direct(stocked(2, cache=policy))
    tools = (await direct.call("tools/list")).complete
    prompts = (await direct.call("prompts/list")).complete
    assert (tools["ttlMs"], tools["cacheScope"]) == (300_000, "public")
    assert (prompts["ttlMs"], prompts["cacheScope"]) == (5_000, "private")


@pytest.mark.parametrize("method", ["tools/call", "prompts/get", "completion/complete"])
async def test_results_that_are_not_cacheable_carry_no_hints(method: str) -> None:
    server = stocked(1)
    params = {
        "tools/call": {"name": "tool_0"},
        "prompts/get": {"name": "prompt_0"},
        "completion/complete": {
            "ref": {"type": "ref/prompt", "name": "prompt_0"},
            "argument": {"name": "x", "value": ""},
        },
    }[method]
    reply = await Direct(server).call(method, params)
    result = reply.result if "result" in reply.message else {}
    assert "ttlMs" not in result
    assert "cacheScope" not in result


def test_cache_hints_must_be_valid() -> None:
    with pytest.raises(ValueError, match="ttl_ms"):
        CacheHint(-1)
    with pytest.raises(ValueError, match="scope"):
        CacheHint(0, "shared")


async def test_discover_advertises_exactly_what_is_served() -> None:
    direct = Direct(stocked(1))
    result = (await direct.call("server/discover")).complete
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"] == {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "completions": {},
        "logging": {},
    }
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "stocked",
        "version": "0.0.0",
    }
    for method in LISTS:
        assert "result" in (await direct.call(method)).message


async def test_a_server_without_offerings_refuses_their_methods() -> None:
    direct = Direct(Server("empty"))
    caps = (await direct.call("server/discover")).complete["capabilities"]
    assert caps == {"logging": {}}
    for method in [*LISTS, "subscriptions/listen"]:
        assert (await direct.call(method, {"notifications": {}})).error["code"] == -32601
