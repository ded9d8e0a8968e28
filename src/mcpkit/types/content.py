"""Content blocks, resource contents and prompt messages, as handlers return them.

A tool may return plain Python values (see :mod:`mcpkit.server.registry` for how they
become content) or, for full control, content blocks built here and a
:class:`ToolResult` (spec ``server/tools.mdx`` §Tool Result). A resource may return
:class:`ResourceContents` (``server/resources.mdx`` §Resource Contents) and a prompt
:class:`PromptMessage` objects (``server/prompts.mdx`` §PromptMessage). Each wraps the
exact wire dict, so returning one passes it through unchanged.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant"]

__all__ = [
    "Content",
    "PromptMessage",
    "ResourceContents",
    "ToolResult",
    "annotation",
    "assistant",
    "audio",
    "blob_resource",
    "embedded_resource",
    "image",
    "resource_link",
    "text",
    "text_resource",
    "user",
]


@dataclass(frozen=True, slots=True)
class Content:
    """One content block, holding its wire form."""

    wire: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.wire["type"])


@dataclass(frozen=True, slots=True)
class ToolResult:
    """An explicit ``tools/call`` result: content, optional structured content, error flag."""

    content: list[Content | dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None


def _annotated(
    block: dict[str, Any], annotations: dict[str, Any] | None, meta: dict[str, Any] | None
) -> Content:
    if annotations:
        block["annotations"] = annotations
    if meta:
        block["_meta"] = meta
    return Content(block)


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def text(
    value: str, *, annotations: dict[str, Any] | None = None, meta: dict[str, Any] | None = None
) -> Content:
    """A text block."""
    return _annotated({"type": "text", "text": value}, annotations, meta)


def image(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Content:
    """An image block; ``data`` is raw bytes or already base64 text."""
    block = {"type": "image", "data": _b64(data), "mimeType": mime_type}
    return _annotated(block, annotations, meta)


def audio(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Content:
    """An audio block; ``data`` is raw bytes or already base64 text."""
    block = {"type": "audio", "data": _b64(data), "mimeType": mime_type}
    return _annotated(block, annotations, meta)


def embedded_resource(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Content:
    """An embedded resource: exactly one of ``text`` or ``blob`` (bytes or base64)."""
    if (text is None) == (blob is None):
        raise ValueError("an embedded resource has exactly one of text or blob")
    resource: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        resource["mimeType"] = mime_type
    if text is not None:
        resource["text"] = text
    else:
        assert blob is not None
        resource["blob"] = _b64(blob)
    return _annotated({"type": "resource", "resource": resource}, annotations, meta)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Content:
    """A link to a resource the client may read or subscribe to."""
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    for key, value in (
        ("title", title),
        ("description", description),
        ("mimeType", mime_type),
        ("size", size),
    ):
        if value is not None:
            block[key] = value
    return _annotated(block, annotations, meta)


# -- resource contents (``resources/read`` and embedded resources) -------------------


@dataclass(frozen=True, slots=True)
class ResourceContents:
    """The contents of one resource as ``resources/read`` returns them (text or blob)."""

    wire: dict[str, Any]

    @property
    def uri(self) -> str:
        return str(self.wire["uri"])


def text_resource(
    uri: str, text: str, *, mime_type: str | None = None, meta: dict[str, Any] | None = None
) -> ResourceContents:
    """Text contents of the resource at ``uri`` (``TextResourceContents``)."""
    wire: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        wire["mimeType"] = mime_type
    wire["text"] = text
    if meta:
        wire["_meta"] = meta
    return ResourceContents(wire)


def blob_resource(
    uri: str,
    data: bytes | str,
    *,
    mime_type: str | None = None,
    meta: dict[str, Any] | None = None,
) -> ResourceContents:
    """Binary contents of the resource at ``uri``; ``data`` is raw bytes or base64 text."""
    wire: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        wire["mimeType"] = mime_type
    wire["blob"] = _b64(data)
    if meta:
        wire["_meta"] = meta
    return ResourceContents(wire)


# -- prompt messages (``prompts/get``) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of a prompt: a role and one content block (spec ``server/prompts.mdx``)."""

    role: Role
    content: Content | dict[str, Any]

    @property
    def wire(self) -> dict[str, Any]:
        block = self.content.wire if isinstance(self.content, Content) else self.content
        return {"role": self.role, "content": block}


def user(content: str | Content | dict[str, Any]) -> PromptMessage:
    """A user message; a string becomes a text block."""
    return PromptMessage("user", text(content) if isinstance(content, str) else content)


def assistant(content: str | Content | dict[str, Any]) -> PromptMessage:
    """An assistant message; a string becomes a text block."""
    return PromptMessage("assistant", text(content) if isinstance(content, str) else content)


def annotation(
    *,
    audience: list[Role] | None = None,
    priority: float | None = None,
    last_modified: str | None = None,
) -> dict[str, Any]:
    """An ``Annotations`` object for content blocks, resources and templates.

    ``priority`` runs from 0 (entirely optional) to 1 (effectively required);
    ``last_modified`` is an ISO 8601 timestamp (spec ``server/resources.mdx`` §Annotations).
    """
    result: dict[str, Any] = {}
    if audience is not None:
        if any(role not in ("user", "assistant") for role in audience):
            raise ValueError('audience entries must be "user" or "assistant"')
        result["audience"] = list(audience)
    if priority is not None:
        if isinstance(priority, bool) or not 0 <= priority <= 1:
            raise ValueError("priority must be a number from 0 to 1")
        result["priority"] = priority
    if last_modified is not None:
        result["lastModified"] = last_modified
    return result
