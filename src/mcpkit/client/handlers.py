"""What the client answers when a server asks it something: elicitation, sampling, roots.

The same :class:`Handlers` serve both eras. On a modern server they answer the
``inputRequests`` of an ``input_required`` result (spec ``basic/patterns/mrtr.mdx``); on a
legacy session they answer real server-to-client requests (``2025-11-25/client/*.mdx``).
The client declares exactly the capabilities it has handlers for.

Elicitation helpers apply the requested schema's defaults (spec ``client/elicitation.mdx``,
SEP-1034): a form the user accepted without touching a field still carries that field's
default, so the server sees what the user saw.

>>> async def ask(params):
...     return accept({"name": "Ada"})
>>> handlers = Handlers(elicitation=ask)
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mcpkit.errors import InvalidParams, MethodNotFound
from mcpkit.types.inputs import ELICIT, LIST_ROOTS, SAMPLE

logger = logging.getLogger("mcpkit.client")

__all__ = [
    "ElicitationHandler",
    "Handlers",
    "RootsProvider",
    "SamplingHandler",
    "accept",
    "apply_defaults",
    "cancel",
    "decline",
    "default_content",
]

ElicitationHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]
SamplingHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]
RootsProvider = (
    Sequence[Mapping[str, Any]]
    | Callable[[], Awaitable[Sequence[Mapping[str, Any]]] | Sequence[Mapping[str, Any]]]
)

INPUT_METHODS = (ELICIT, SAMPLE, LIST_ROOTS)
Answer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def accept(content: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An ``ElicitResult`` that accepts, with the submitted form values."""
    result: dict[str, Any] = {"action": "accept"}
    if content is not None:
        result["content"] = dict(content)
    return result


def decline() -> dict[str, Any]:
    """An ``ElicitResult``: the user explicitly said no."""
    return {"action": "decline"}


def cancel() -> dict[str, Any]:
    """An ``ElicitResult``: the user dismissed the request without choosing."""
    return {"action": "cancel"}


def default_content(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The values a form built from ``schema`` starts with: every property's default."""
    if not isinstance(schema, Mapping):
        return {}
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {
        name: prop["default"]
        for name, prop in properties.items()
        if isinstance(prop, Mapping) and "default" in prop
    }


def apply_defaults(
    schema: Mapping[str, Any] | None, content: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``content`` with every field it omits filled from the schema's defaults."""
    filled = default_content(schema)
    if content:
        filled.update(content)
    return filled


async def _call(function: Callable[..., Any], *args: Any) -> Any:
    value = function(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


class Handlers:
    """The client's answers to server requests, and the capabilities they imply."""

    def __init__(
        self,
        *,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsProvider | None = None,
        elicitation_defaults: bool = True,
    ) -> None:
        self.elicitation = elicitation
        self.sampling = sampling
        self.roots = roots
        self.elicitation_defaults = elicitation_defaults

    def capabilities(self, era: str = "modern") -> dict[str, Any]:
        """Client capabilities for what has a handler (legacy roots announce listChanged)."""
        caps: dict[str, Any] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {"form": {}}
        if self.sampling is not None:
            caps["sampling"] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True} if era == "legacy" else {}
        return caps

    def _answerer(self, method: str) -> Answer | None:
        """What answers a server request of ``method`` here, or None."""
        if method == ELICIT:
            return self._elicit if self.elicitation is not None else None
        if method == SAMPLE:
            return self._sample if self.sampling is not None else None
        if method == LIST_ROOTS:
            return self._list_roots if self.roots is not None else None
        return _pong if method == "ping" else None

    def handles(self, method: str) -> bool:
        """True when a server request of ``method`` has a handler here."""
        return self._answerer(method) is not None

    async def answer(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """The result for one server request; MethodNotFound when there is no handler."""
        answerer = self._answerer(method)
        if answerer is None:
            raise MethodNotFound(f"Method not found: {method}")
        return await answerer(dict(params) if isinstance(params, Mapping) else {})

    async def answer_all(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """Answer every entry of an ``inputRequests`` map, concurrently, keyed alike."""
        keys: list[str] = []
        calls: list[Awaitable[dict[str, Any]]] = []
        for key, request in requests.items():
            if not isinstance(request, Mapping) or not isinstance(request.get("method"), str):
                raise InvalidParams(f"input request {key!r} is not a request object")
            method = request["method"]
            if method not in INPUT_METHODS:
                raise InvalidParams(f"input request {key!r} uses unsupported method {method!r}")
            keys.append(key)
            calls.append(self.answer(method, request.get("params")))
        results = await asyncio.gather(*calls)
        return dict(zip(keys, results, strict=True))

    async def _elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.elicitation is not None
        result = _result_dict(await _call(self.elicitation, params), ELICIT)
        if (
            self.elicitation_defaults
            and result.get("action") == "accept"
            and params.get("mode", "form") == "form"
        ):
            content = result.get("content")
            result["content"] = apply_defaults(
                params.get("requestedSchema"), content if isinstance(content, Mapping) else None
            )
        return result

    async def _sample(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.sampling is not None
        return _result_dict(await _call(self.sampling, params), SAMPLE)

    async def _list_roots(self, params: dict[str, Any]) -> dict[str, Any]:
        roots = self.roots
        if callable(roots):
            roots = await _call(roots)
        return {"roots": [dict(root) for root in roots or ()]}


async def _pong(params: dict[str, Any]) -> dict[str, Any]:
    """``ping`` (legacy ``basic/utilities/ping.mdx``): an empty result."""
    return {}


def _result_dict(value: Any, method: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"the {method} handler returned {type(value).__name__}, not a dict")
    return dict(value)
