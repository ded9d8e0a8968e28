"""Content helpers build exactly the spec's wire shapes (``server/tools.mdx`` §Tool Result,
``server/resources.mdx`` §Resource Contents, ``server/prompts.mdx`` §PromptMessage)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import content

from .wire import spec_schema


@pytest.mark.parametrize(
    ("block", "definition", "wire"),
    [
        (content.text("hi"), "TextContent", {"type": "text", "text": "hi"}),
        (
            content.image(b"\x89PNG", "image/png", annotations=content.annotation(priority=1)),
            "ImageContent",
            {
                "type": "image",
                "data": "iVBORw==",
                "mimeType": "image/png",
                "annotations": {"priority": 1},
            },
        ),
        (
            content.audio("UklGRg==", "audio/wav"),
            "AudioContent",
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        ),
        (
            content.embedded_resource("test://a", blob=b"\x00", mime_type="application/x"),
            "EmbeddedResource",
            {
                "type": "resource",
                "resource": {"uri": "test://a", "mimeType": "application/x", "blob": "AA=="},
            },
        ),
        (
            content.resource_link(
                "file:///main.rs", "main.rs", title="Main", mime_type="text/x-rust", size=3
            ),
            "ResourceLink",
            {
                "type": "resource_link",
                "uri": "file:///main.rs",
                "name": "main.rs",
                "title": "Main",
                "mimeType": "text/x-rust",
                "size": 3,
            },
        ),
    ],
)
def test_content_blocks_match_the_schema(
    block: content.Content, definition: str, wire: dict[str, Any]
) -> None:
    assert block.wire == wire
    spec_schema().check(definition, block.wire)
    spec_schema().check("ContentBlock", block.wire)


def test_resource_contents_are_text_or_blob() -> None:
    text = content.text_resource("test://t", "body", mime_type="text/plain", meta={"a/b": 1})
    blob = content.blob_resource("test://b", b"\x01\x02")
    assert text.wire == {
        "uri": "test://t",
        "mimeType": "text/plain",
        "text": "body",
        "_meta": {"a/b": 1},
    }
    assert blob.wire == {"uri": "test://b", "blob": "AQI="}
    spec_schema().check("TextResourceContents", text.wire)
    spec_schema().check("BlobResourceContents", blob.wire)


def test_prompt_messages_have_a_role_and_one_block() -> None:
    message = content.assistant(content.image("AA==", "image/png"))
    assert message.wire == {
        "role": "assistant",
        "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
    }
    assert content.user("hello").wire == {
        "role": "user",
        "content": {"type": "text", "text": "hello"},
    }
    spec_schema().check("PromptMessage", message.wire)


@pytest.mark.parametrize(
    "options",
    [{"audience": ["robot"]}, {"priority": 1.5}, {"priority": -0.1}, {"priority": True}],
)
def test_annotations_are_checked(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"audience|priority"):
        content.annotation(**options)


def test_an_embedded_resource_has_exactly_one_of_text_or_blob() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        content.embedded_resource("test://x")
    with pytest.raises(ValueError, match="exactly one"):
        content.embedded_resource("test://x", text="a", blob=b"b")
