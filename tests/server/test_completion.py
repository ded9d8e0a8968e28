"""completion/complete (spec ``server/utilities/completion.mdx``)."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from mcpkit import Context, Server
from mcpkit.server.completion import Completion

from .wire import INVALID_PARAMS, Direct

LANGUAGES = ["python", "pytorch", "pyside", "perl", "php"]


def completing() -> Server:
    server = Server("complete")

    @server.prompt
    def code_review(
        language: str, framework: str = "", level: Literal["Low", "High"] = "Low"
    ) -> str:
        return ""

    @server.resource("file:///{+path}")
    def files(path: str) -> str:
        return ""

    @server.completion(prompt="code_review", argument="language")
    def languages(value: str) -> list[str]:
        return [name for name in LANGUAGES if name.startswith(value)]

    @server.completion(prompt="code_review", argument="framework")
    async def frameworks(value: str, arguments: dict[str, str], ctx: Context) -> Completion:
        options = {"python": ["flask", "fastapi"], "php": ["laravel"]}
        found = [f for f in options.get(arguments.get("language", ""), []) if f.startswith(value)]
        return Completion(found, total=len(found), has_more=False)

    @server.completion(template="file:///{+path}", argument="path")
    def paths(value: str) -> list[str]:
        return [f"{value}{i}" for i in range(250)]

    return server


def request(ref: dict[str, Any], name: str, value: str, **extra: Any) -> dict[str, Any]:
    return {"ref": ref, "argument": {"name": name, "value": value}, **extra}


PROMPT = {"type": "ref/prompt", "name": "code_review"}


async def test_a_prompt_argument_completes_with_total_and_has_more() -> None:
    reply = await Direct(completing()).call(
        "completion/complete", request(PROMPT, "language", "py")
    )
    assert reply.complete["completion"] == {
        "values": ["python", "pytorch", "pyside"],
        "total": 3,
        "hasMore": False,
    }


async def test_earlier_arguments_reach_the_completer_as_context() -> None:
    reply = await Direct(completing()).call(
        "completion/complete",
        request(PROMPT, "framework", "f", context={"arguments": {"language": "python"}}),
    )
    assert reply.complete["completion"] == {
        "values": ["flask", "fastapi"],
        "total": 2,
        "hasMore": False,
    }


async def test_a_template_variable_completes_and_is_cut_at_100_values() -> None:
    reply = await Direct(completing()).call(
        "completion/complete",
        request({"type": "ref/resource", "uri": "file:///{+path}"}, "path", "src/"),
    )
    completion = reply.complete["completion"]
    assert len(completion["values"]) == 100
    assert completion["values"][0] == "src/0"
    assert completion["total"] == 250
    assert completion["hasMore"] is True


async def test_a_literal_argument_completes_from_its_values() -> None:
    reply = await Direct(completing()).call("completion/complete", request(PROMPT, "level", "h"))
    assert reply.complete["completion"]["values"] == ["High"]


async def test_an_argument_without_a_completer_gets_no_suggestions() -> None:
    server = Server("s")

    @server.prompt
    def plain(arg1: str) -> str:
        return ""

    reply = await Direct(server).call(
        "completion/complete",
        request({"type": "ref/prompt", "name": "plain"}, "arg1", "test"),
    )
    assert reply.complete["completion"] == {"values": [], "total": 0, "hasMore": False}


@pytest.mark.parametrize(
    "params",
    [
        request({"type": "ref/prompt", "name": "missing"}, "language", ""),
        request(PROMPT, "nonexistent", ""),
        request({"type": "ref/resource", "uri": "file:///{other}"}, "path", ""),
        request({"type": "ref/resource", "uri": "file:///{+path}"}, "nope", ""),
        request({"type": "ref/tool", "name": "x"}, "a", ""),
        {"ref": PROMPT, "argument": {"name": "language"}},
        {"ref": PROMPT, "argument": {"name": "language", "value": 3}},
        {"argument": {"name": "language", "value": ""}},
        request(PROMPT, "language", "", context={"arguments": {"a": 1}}),
        request(PROMPT, "language", "", context="x"),
    ],
)
async def test_bad_completion_requests_are_invalid_params(params: dict[str, Any]) -> None:
    reply = await Direct(completing()).call("completion/complete", params)
    assert reply.error["code"] == INVALID_PARAMS


async def test_completions_are_advertised_when_something_can_be_completed() -> None:
    assert (
        "completions"
        in (await Direct(completing()).call("server/discover")).complete["capabilities"]
    )
    bare = Server("bare")

    @bare.tool
    def t() -> str:
        return ""

    direct = Direct(bare)
    assert "completions" not in (await direct.call("server/discover")).complete["capabilities"]
    assert (await direct.call("completion/complete", request(PROMPT, "a", ""))).error[
        "code"
    ] == -32601


def test_a_completion_names_exactly_one_target() -> None:
    server = Server("s")
    with pytest.raises(ValueError, match="exactly one"):
        server.completion(argument="a")
    with pytest.raises(ValueError, match="exactly one"):
        server.completion(argument="a", prompt="p", template="t")
