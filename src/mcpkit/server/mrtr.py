"""Multi round-trip requests: how ``ctx.elicit``/``sample``/``list_roots`` get answers
(spec ``basic/patterns/mrtr.mdx``, design §3.1).

A handler asks for input through its :class:`~mcpkit.server.context.Context`; the
context hands the question to the request's :class:`InputStrategy`, chosen per request:

* :class:`ModernInputs` (2026-07-28, stateless). The answer is looked up in the answers
  sealed in ``requestState`` by earlier rounds, then in the retry's ``inputResponses``.
  A missing answer stops the handler with :class:`Interrupt` (a ``BaseException``, so a
  handler's ``except Exception`` cannot swallow it) and the server replies
  ``resultType: "input_required"`` with every pending input request and a freshly sealed
  ``requestState``. The client retries and the handler runs again *from the top*:
  handlers that ask for input must be idempotent up to their input points.
* :class:`NoInputs` for methods that may not ask (only ``tools/call``, ``prompts/get``
  and ``resources/read`` may answer ``input_required``).
* :class:`~mcpkit.server.legacy.LegacyInputs` for a legacy session: a real
  server-to-client request on the call's own stream, awaited (with a timeout, and
  cancelled with the call); it plugs into the same :class:`InputStrategy` seam.

Keys name input requests. An author may choose one (``key="user_name"``); otherwise it is
derived from the request's content (``elicit_<digest>``, ``sample_<digest>``,
``roots_<digest>``, with ``_2``, ``_3`` ... for repeats of an identical request within one
run), which is stable across retries because the handler asks the same questions in the
same order. Several questions asked concurrently (``asyncio.gather``) are all collected
into one ``input_required`` result.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from mcpkit.errors import InvalidParams, MissingRequiredClientCapability, ProtocolError
from mcpkit.protocol import codec
from mcpkit.server.request_state import RequestStateSealer, params_digest, principal_id
from mcpkit.types.inputs import ELICIT, LIST_ROOTS, SAMPLE
from mcpkit.types.methods import CLIENT_REQUESTS

T = TypeVar("T")

INPUT_METHODS: frozenset[str] = frozenset(
    name for name, spec in CLIENT_REQUESTS.items() if spec.input_required
)

_KINDS = {ELICIT: "elicit", SAMPLE: "sample", LIST_ROOTS: "roots"}
_MISSING = object()

__all__ = [
    "INPUT_METHODS",
    "InputStrategy",
    "Interrupt",
    "ModernInputs",
    "NoInputs",
    "capability_refused",
    "derive_key",
]


class Interrupt(BaseException):
    """Stops a handler that cannot go on without input; never escapes the dispatcher."""


class InputStrategy(Protocol):
    """How a request obtains the client's answer to an input request."""

    async def ask(
        self,
        method: str,
        params: dict[str, Any],
        required: dict[str, Any] | None,
        parse: Callable[[Any], T],
        key: str | None,
    ) -> T:
        """The parsed answer to ``method``/``params``.

        ``required`` is the client capability the request needs (e.g. ``{"sampling": {}}``),
        or None when the client already declared it.
        """
        ...


class NoInputs:
    """For methods that may not ask the client for input."""

    def __init__(self, method: str) -> None:
        self.method = method

    async def ask(
        self,
        method: str,
        params: dict[str, Any],
        required: dict[str, Any] | None,
        parse: Callable[[Any], T],
        key: str | None,
    ) -> T:
        raise RuntimeError(
            f"a {self.method} handler cannot ask the client for input: only tools/call, "
            "prompts/get and resources/read may (spec basic/patterns/mrtr.mdx)"
        )


def derive_key(method: str, params: dict[str, Any], occurrence: int = 1) -> str:
    """A key for an input request, stable across retries of the same request."""
    canonical = codec.dumps_canonical({"method": method, "params": params})
    digest = hashlib.sha256(canonical).hexdigest()[:16]
    key = f"{_KINDS.get(method, 'input')}_{digest}"
    return key if occurrence == 1 else f"{key}_{occurrence}"


def capability_refused(required: dict[str, Any]) -> MissingRequiredClientCapability:
    """The -32021 for an input request whose client capability was not declared (in
    either era: ``basic/patterns/mrtr.mdx`` and the legacy ``client/*.mdx``)."""
    return MissingRequiredClientCapability(
        required,
        f"This request needs the client capability {', '.join(required)} to ask for input",
    )


class ModernInputs:
    """Answers for one modern request: sealed earlier answers plus this retry's responses.

    After the handler stops, :meth:`outcome` turns what was recorded into the reply: the
    protocol error it ran into, or an ``input_required`` result.
    """

    __slots__ = ("_asked", "_counts", "_responses", "_sealed", "error", "pending", "used")

    def __init__(
        self, sealed: dict[str, Any] | None = None, responses: dict[str, Any] | None = None
    ) -> None:
        self._sealed = sealed or {}
        self._responses = responses or {}
        self._asked: dict[str, bytes] = {}
        self._counts: dict[bytes, int] = {}
        self.pending: dict[str, dict[str, Any]] = {}
        self.used: dict[str, Any] = {}
        self.error: ProtocolError | None = None

    @classmethod
    def from_request(
        cls,
        sealer: RequestStateSealer,
        method: str,
        params: dict[str, Any],
        principal: Any,
    ) -> ModernInputs:
        """Read ``inputResponses`` and open ``requestState``; -32602 when either is bad."""
        responses: dict[str, Any] | None = None
        if "inputResponses" in params:
            responses = params["inputResponses"]
            if type(responses) is not dict:
                raise InvalidParams("inputResponses must be an object")
        sealed: dict[str, Any] | None = None
        if "requestState" in params:
            sealed = sealer.open(
                params["requestState"],
                method=method,
                digest=params_digest(params),
                principal=principal_id(principal),
            )
        return cls(sealed, responses)

    @property
    def interrupted(self) -> bool:
        return self.error is not None or bool(self.pending)

    async def ask(
        self,
        method: str,
        params: dict[str, Any],
        required: dict[str, Any] | None,
        parse: Callable[[Any], T],
        key: str | None,
    ) -> T:
        if self.error is not None:
            raise Interrupt
        if required is not None:
            self.error = capability_refused(required)
            raise Interrupt
        key = self._key_for(method, params, key)
        if key in self.pending:
            raise Interrupt
        raw = self._sealed.get(key, _MISSING)
        if raw is _MISSING:
            raw = self._responses.get(key, _MISSING)
        if raw is _MISSING:
            self.pending[key] = {"method": method, "params": params}
            raise Interrupt
        try:
            value = parse(raw)
        except ValueError as exc:
            self.error = InvalidParams(f"inputResponses[{key!r}] is not a valid answer: {exc}")
            raise Interrupt from None
        self.used[key] = raw
        return value

    def _key_for(self, method: str, params: dict[str, Any], key: str | None) -> str:
        fingerprint = codec.dumps_canonical({"method": method, "params": params})
        if key is None:
            count = self._counts.get(fingerprint, 0) + 1
            self._counts[fingerprint] = count
            key = derive_key(method, params, count)
        elif type(key) is not str or not key:
            raise ValueError("an input request key must be a non-empty string")
        previous = self._asked.get(key)
        if previous is not None and previous != fingerprint:
            raise ValueError(f"input request key {key!r} is already used for another request")
        self._asked[key] = fingerprint
        return key

    def outcome(
        self, sealer: RequestStateSealer, method: str, params: dict[str, Any], principal: Any
    ) -> dict[str, Any]:
        """The reply after an interruption: raise the recorded error or ask for input."""
        if self.error is not None:
            raise self.error
        answers = {**self._sealed, **self.used}
        state = sealer.seal(
            method=method,
            digest=params_digest(params),
            principal=principal_id(principal),
            answers=answers,
        )
        return {
            "resultType": "input_required",
            "inputRequests": self.pending,
            "requestState": state,
        }
