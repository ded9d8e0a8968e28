"""The multi round-trip request driver (spec ``basic/patterns/mrtr.mdx``, SEP-2322).

A modern server that needs input answers ``resultType: "input_required"`` with
``inputRequests`` (elicitation, sampling, roots) and/or an opaque ``requestState``. The
driver asks the client's handlers for every input concurrently and sends the original
request again: a new JSON-RPC id (the caller's ``send`` makes a new request each time),
the original params, ``inputResponses`` keyed like the requests, and ``requestState``
echoed byte for byte, or absent when the server gave none. A result without
``resultType`` is complete (spec ``basic/index.mdx`` §ResultType); an unknown
``resultType`` is invalid; the rounds are capped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcpkit.client.handlers import Handlers
from mcpkit.errors import ServerMisbehaved
from mcpkit.types.methods import CLIENT_REQUESTS

__all__ = ["DEFAULT_MAX_ROUNDS", "ServerMisbehaved", "drive", "result_type"]

DEFAULT_MAX_ROUNDS = 8
KNOWN_RESULT_TYPES = frozenset({"complete", "input_required"})


def result_type(result: Mapping[str, Any]) -> str:
    """``resultType``, defaulting to ``complete``; unknown values are refused."""
    kind = result.get("resultType", "complete")
    if kind not in KNOWN_RESULT_TYPES:
        raise ServerMisbehaved(f"the server answered with an unknown resultType {kind!r}")
    return str(kind)


async def drive(
    method: str,
    params: Mapping[str, Any],
    send: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
    handlers: Handlers,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> tuple[dict[str, Any], int]:
    """Run ``method`` to completion; return the final result and the rounds it took."""
    spec = CLIENT_REQUESTS.get(method)
    allowed = spec is not None and spec.input_required
    body = dict(params)
    rounds = 0
    while True:
        result = await send(body)
        if result_type(result) == "complete":
            return result, rounds
        if not allowed:
            raise ServerMisbehaved(f"{method} cannot answer input_required")
        rounds += 1
        if rounds > max_rounds:
            raise ServerMisbehaved(f"{method} still needed input after {max_rounds} rounds")
        body = await next_round(params, result, handlers)


async def next_round(
    params: Mapping[str, Any], result: Mapping[str, Any], handlers: Handlers
) -> dict[str, Any]:
    """The params of the retry that answers ``result``."""
    requests = result.get("inputRequests")
    state = result.get("requestState")
    if requests is not None and not isinstance(requests, Mapping):
        raise ServerMisbehaved("inputRequests must be an object")
    if state is not None and not isinstance(state, str):
        raise ServerMisbehaved("requestState must be a string")
    if not requests and state is None:
        raise ServerMisbehaved("input_required carried neither inputRequests nor requestState")
    body = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    for key, request in (requests or {}).items():
        method = request.get("method") if isinstance(request, Mapping) else None
        if not isinstance(method, str) or not handlers.handles(method):
            raise ServerMisbehaved(
                f"input request {key!r} asks for {method!r}, which this client did not declare"
            )
    if requests:
        body["inputResponses"] = await handlers.answer_all(requests)
    if state is not None:
        body["requestState"] = state
    return body
