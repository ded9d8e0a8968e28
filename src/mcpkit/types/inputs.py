"""The answers a client gives to a server's input requests, read and checked.

A server asks the client for input with ``elicitation/create``, ``sampling/createMessage``
or ``roots/list`` (spec ``client/elicitation.mdx``, ``client/sampling.mdx``,
``client/roots.mdx``); on 2026-07-28 the answers come back in a retry's
``inputResponses`` (``basic/patterns/mrtr.mdx``). Each ``from_wire`` here turns one
answer into a small typed value, or raises ``ValueError`` saying what is wrong with it, so
a malformed answer is never mistaken for a real one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ElicitAction = Literal["accept", "decline", "cancel"]

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
LIST_ROOTS = "roots/list"

__all__ = [
    "ELICIT",
    "LIST_ROOTS",
    "SAMPLE",
    "ElicitResult",
    "Root",
    "SamplingResult",
    "parse_roots",
]

_ACTIONS = ("accept", "decline", "cancel")


@dataclass(frozen=True, slots=True)
class ElicitResult:
    """The user's answer to an elicitation: ``accept`` with content, ``decline`` or ``cancel``."""

    action: ElicitAction
    content: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    @classmethod
    def from_wire(cls, value: Any) -> ElicitResult:
        if type(value) is not dict:
            raise ValueError("an ElicitResult must be an object")
        action = value.get("action")
        if action not in _ACTIONS:
            raise ValueError('"action" must be one of "accept", "decline", "cancel"')
        content = value.get("content")
        if content is not None:
            if type(content) is not dict:
                raise ValueError('"content" must be an object')
            for key, item in content.items():
                if not _primitive_or_strings(item):
                    raise ValueError(
                        f'"content.{key}" must be a string, number, boolean or array of strings'
                    )
        return cls(action, content)


def _primitive_or_strings(value: Any) -> bool:
    if isinstance(value, str | bool | int | float):
        return True
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


@dataclass(frozen=True, slots=True)
class SamplingResult:
    """A message the client's model produced (``CreateMessageResult``)."""

    role: Literal["user", "assistant"]
    content: list[dict[str, Any]]
    model: str
    stop_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def text(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(
            str(block["text"]) for block in self.content if block.get("type") == "text"
        )

    @classmethod
    def from_wire(cls, value: Any) -> SamplingResult:
        if type(value) is not dict:
            raise ValueError("a CreateMessageResult must be an object")
        role = value.get("role")
        if role not in ("user", "assistant"):
            raise ValueError('"role" must be "user" or "assistant"')
        model = value.get("model")
        if type(model) is not str:
            raise ValueError('"model" must be a string')
        content = value.get("content")
        blocks: list[dict[str, Any]] = []
        for block in content if isinstance(content, list) else [content]:
            if type(block) is not dict or type(block.get("type")) is not str:
                raise ValueError('"content" must be a content block or an array of them')
            blocks.append(block)
        stop = value.get("stopReason")
        if stop is not None and type(stop) is not str:
            raise ValueError('"stopReason" must be a string')
        return cls(role, blocks, model, stop, value)


@dataclass(frozen=True, slots=True)
class Root:
    """A root the client lets the server work in (a ``file://`` URI and an optional name)."""

    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = None


def parse_roots(value: Any) -> list[Root]:
    """The roots of a ``ListRootsResult``."""
    if type(value) is not dict:
        raise ValueError("a ListRootsResult must be an object")
    roots = value.get("roots")
    if type(roots) is not list:
        raise ValueError('"roots" must be an array')
    result: list[Root] = []
    for index, root in enumerate(roots):
        if type(root) is not dict or type(root.get("uri")) is not str:
            raise ValueError(f'"roots[{index}]" must be an object with a string uri')
        name = root.get("name")
        if name is not None and type(name) is not str:
            raise ValueError(f'"roots[{index}].name" must be a string')
        meta = root.get("_meta")
        result.append(Root(root["uri"], name, meta if type(meta) is dict else None))
    return result
