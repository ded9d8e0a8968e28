"""Content blocks and explicit tool results (spec ``server/tools.mdx`` §Tool Result).

A tool may return plain Python values (see :mod:`mcpkit.server.signature` for how they
become content) or, for full control, content blocks built here and a
:class:`ToolResult`. A :class:`Content` wraps the exact wire dict, so returning one
passes it through unchanged.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant"]

__all__ = [
    "Content",
    "ToolResult",
    "audio",
    "embedded_resource",
    "image",
    "resource_link",
    "text",
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
