"""prompts/list and prompts/get (spec ``server/prompts.mdx``)."""

from __future__ import annotations

import enum
from typing import Annotated, Literal

import pytest

from mcpkit import Context, Server, content

from .wire import INTERNAL_ERROR, INVALID_PARAMS, Direct

PNG_B64 = "iVBORw0KGgo="
WAV_B64 = "UklGRg=="


class Tone(enum.Enum):
    FRIENDLY = "friendly"
    FORMAL = "formal"


def prompts() -> Server:
    server = Server("prompts", "1.0.0")

    @server.prompt(title="Review code", icons=[{"src": "https://example.com/r.svg"}])
    def code_review(
        code: Annotated[str, "The code to review"],
        language: str | None = None,
        tone: Tone = Tone.FRIENDLY,
        depth: Literal["quick", "deep"] = "quick",
    ) -> str:
        """Asks the model to review code.

        Args:
            language: The programming language.
        """
        return f"Review ({tone.value}, {depth}, {language}): {code}"

    @server.prompt
    def media() -> list[content.PromptMessage]:
        """Every kind of content."""
        return [
            content.user("look"),
            content.user(content.image(PNG_B64, "image/png")),
            content.user(content.audio(WAV_B64, "audio/wav")),
            content.assistant(
                content.embedded_resource("test://doc", text="doc text", mime_type="text/plain")
            ),
            content.user(content.resource_link("test://doc", "doc")),
        ]

    @server.prompt(name="raw-dicts", description="Plain dicts pass through")
    async def raw(ctx: Context) -> list[dict[str, object]]:
        return [{"role": "assistant", "content": {"type": "text", "text": str(ctx.method)}}]

    @server.prompt
    def broken() -> int:
        return 42

    return server


async def test_prompts_list_gives_arguments_from_the_signature() -> None:
    listed = (await Direct(prompts()).call("prompts/list")).complete["prompts"]
    assert [p["name"] for p in listed] == ["code_review", "media", "raw-dicts", "broken"]
    assert listed[0] == {
        "name": "code_review",
        "title": "Review code",
        "description": "Asks the model to review code.",
        "arguments": [
            {"name": "code", "description": "The code to review", "required": True},
            {"name": "language", "description": "The programming language.", "required": False},
            {"name": "tone", "required": False},
            {"name": "depth", "required": False},
        ],
        "icons": [{"src": "https://example.com/r.svg"}],
    }
    assert listed[2]["description"] == "Plain dicts pass through"


async def test_prompts_get_renders_the_messages() -> None:
    reply = await Direct(prompts()).call(
        "prompts/get",
        {"name": "code_review", "arguments": {"code": "x=1", "tone": "formal", "depth": "deep"}},
    )
    assert reply.complete["description"] == "Asks the model to review code."
    assert reply.complete["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review (formal, deep, None): x=1"}}
    ]


async def test_messages_carry_text_image_audio_and_embedded_resources() -> None:
    messages = (await Direct(prompts()).call("prompts/get", {"name": "media"})).complete["messages"]
    assert [m["content"]["type"] for m in messages] == [
        "text",
        "image",
        "audio",
        "resource",
        "resource_link",
    ]
    assert messages[1]["content"] == {"type": "image", "data": PNG_B64, "mimeType": "image/png"}
    assert messages[2]["content"]["mimeType"] == "audio/wav"
    assert messages[3]["role"] == "assistant"
    assert messages[3]["content"]["resource"] == {
        "uri": "test://doc",
        "mimeType": "text/plain",
        "text": "doc text",
    }


async def test_a_prompt_may_take_the_context_and_return_dicts() -> None:
    messages = (await Direct(prompts()).call("prompts/get", {"name": "raw-dicts"})).complete[
        "messages"
    ]
    assert messages == [{"role": "assistant", "content": {"type": "text", "text": "prompts/get"}}]


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"name": "nope"}, "Unknown prompt: nope"),
        ({"name": "code_review"}, "missing required argument(s): code"),
        ({"name": "code_review", "arguments": {"code": "x", "colour": "red"}}, "'colour'"),
        ({"name": "code_review", "arguments": {"code": 5}}, "must be a string"),
        ({"name": "code_review", "arguments": {"code": "x", "depth": "medium"}}, "one of"),
        ({"name": "code_review", "arguments": {"code": "x", "tone": "rude"}}, "one of"),
        ({"name": "code_review", "arguments": ["x"]}, "must be an object"),
        ({"name": 7}, "string name"),
    ],
)
async def test_bad_prompt_requests_are_invalid_params(
    params: dict[str, object], fragment: str
) -> None:
    reply = await Direct(prompts()).call("prompts/get", params)
    assert reply.error["code"] == INVALID_PARAMS
    assert fragment in reply.error["message"]


async def test_a_prompt_returning_something_unusable_is_an_internal_error() -> None:
    reply = await Direct(prompts()).call("prompts/get", {"name": "broken"})
    assert reply.error["code"] == INTERNAL_ERROR


def test_prompt_arguments_must_be_strings() -> None:
    server = Server("s")

    def numeric(count: int) -> str:
        return ""

    with pytest.raises(TypeError, match="must be a string"):
        server.add_prompt(numeric)


async def test_prompt_capability_appears_with_the_first_prompt() -> None:
    server = Server("s")
    direct = Direct(server)
    assert "prompts" not in (await direct.call("server/discover")).complete["capabilities"]
    assert (await direct.call("prompts/list")).error["code"] == -32601

    @server.prompt
    def hello() -> str:
        return "hi"

    caps = (await direct.call("server/discover")).complete["capabilities"]
    assert caps["prompts"] == {"listChanged": True}
    assert (await direct.call("prompts/list")).complete["prompts"][0]["name"] == "hello"


async def test_a_prompt_needing_a_client_capability_refuses_clients_without_it() -> None:
    server = Server("s")

    @server.prompt(requires={"elicitation": {}})
    def asks() -> str:
        return "hi"

    reply = await Direct(server).call("prompts/get", {"name": "asks"}, capabilities={})
    assert reply.error["code"] == -32021
    assert reply.error["data"] == {"requiredCapabilities": {"elicitation": {}}}
