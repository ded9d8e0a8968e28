"""The one :class:`Context` every handler may receive.

A tool, resource, prompt or completion function gets it by declaring a parameter
annotated with ``Context``. It tells the handler who is asking (client info,
capabilities, principal, protocol version) and lets it talk back within the request:
progress (``basic/patterns/progress.mdx``), log messages
(``server/utilities/logging.mdx``), and questions for the client and its user:
:meth:`Context.elicit`, :meth:`Context.sample` and :meth:`Context.list_roots`
(``basic/patterns/mrtr.mdx``). Cancellation reaches the handler as ordinary task
cancellation.

Asking for input on a 2026-07-28 request may end the current run of the handler: when
the answer is not in the request yet, the server replies ``input_required`` and the
client retries with the answer, which runs the handler again *from the top*. Code before
an input point therefore runs once per round: keep it free of effects that must happen
once (or make them idempotent), and do the real work after the last question.

On a legacy session (a client that opened with ``initialize``) the same calls send the
client a real ``elicitation/create``, ``sampling/createMessage`` or ``roots/list`` request
and wait for its answer, so the handler runs once; the client's identity, capabilities
and log level are those it declared for the session (see :mod:`mcpkit.server.legacy`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcpkit.errors import MissingRequiredClientCapability, RequestId
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.meta import LOG_SEVERITY, RequestMeta
from mcpkit.server.mrtr import INPUT_METHODS, InputStrategy, ModernInputs, NoInputs
from mcpkit.server.prompts import message_wire
from mcpkit.transports.base import Channel
from mcpkit.types.content import Content, PromptMessage
from mcpkit.types.inputs import (
    ELICIT,
    LIST_ROOTS,
    SAMPLE,
    ElicitResult,
    Root,
    SamplingResult,
    parse_roots,
)

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["Context", "missing_capabilities"]

_FORM_TYPES = ("string", "number", "integer", "boolean", "array")


class Context:
    """Everything a handler knows about the request it serves."""

    __slots__ = (
        "_done",
        "_inputs",
        "_last_progress",
        "channel",
        "meta",
        "method",
        "params",
        "request_id",
        "server",
    )

    def __init__(
        self,
        server: Server,
        request_id: RequestId,
        method: str,
        params: dict[str, Any],
        meta: RequestMeta,
        channel: Channel,
        inputs: InputStrategy | None = None,
    ) -> None:
        self.server = server
        self.request_id = request_id
        self.method = method
        self.params = params
        self.meta = meta
        self.channel = channel
        self._inputs = inputs
        self._last_progress: float | None = None
        self._done = False

    @property
    def protocol_version(self) -> str:
        return self.meta.protocol_version

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The client's self-reported name and version (display only, never trust it)."""
        return self.meta.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.meta.client_capabilities

    @property
    def progress_token(self) -> str | int | None:
        return self.meta.progress_token

    @property
    def log_level(self) -> str | None:
        return self.meta.log_level

    @property
    def principal(self) -> Any:
        """The authenticated caller the transport verified, or None."""
        return self.channel.principal

    def finish(self) -> None:
        """Mark the request answered: later progress or log calls send nothing."""
        self._done = True

    # -- client capabilities ------------------------------------------------------------

    def client_supports(self, capability: str, feature: str | None = None) -> bool:
        """True when the request declares ``capability`` (and its ``feature``, if given).

        ``ctx.client_supports("elicitation")``, ``ctx.client_supports("sampling", "tools")``.
        """
        return not missing_capabilities(
            {capability: {feature: {}} if feature else {}}, self.client_capabilities
        )

    def require(self, capabilities: dict[str, Any]) -> None:
        """Refuse the request with -32021 unless the client declared ``capabilities``.

        ``capabilities`` is shaped like the client's own declaration, e.g.
        ``{"sampling": {}}`` or ``{"elicitation": {"url": {}}}``.
        """
        missing = missing_capabilities(capabilities, self.client_capabilities)
        if missing:
            raise MissingRequiredClientCapability(
                missing, f"This request requires client capabilities: {', '.join(missing)}"
            )

    # -- input from the client (multi round-trip requests) -----------------------------

    @property
    def inputs(self) -> InputStrategy:
        """How this request gets answers from the client (chosen per request)."""
        inputs = self._inputs
        if inputs is None:
            inputs = ModernInputs() if self.method in INPUT_METHODS else NoInputs(self.method)
            self._inputs = inputs
        return inputs

    @property
    def interrupted_inputs(self) -> ModernInputs | None:
        """The modern inputs that stopped the handler, if any did."""
        inputs = self._inputs
        if isinstance(inputs, ModernInputs) and inputs.interrupted:
            return inputs
        return None

    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> ElicitResult:
        """Ask the user for structured input through a form (``elicitation/create``).

        ``schema`` is a flat object schema whose properties are strings, numbers,
        integers, booleans or enums (spec ``client/elicitation.mdx`` §Requested Schema).
        Never ask for passwords, tokens or other secrets this way. An accepted answer is
        checked against ``schema``; a client that declared no ``elicitation`` capability
        gets -32021. On a 2026-07-28 request a missing answer ends this run of the
        handler (the server replies ``input_required``) and the retry runs the handler
        again from the top, so code before this call must be safe to repeat. ``key``
        names the question in ``inputRequests`` (default: derived from its content).
        """
        if not isinstance(message, str):
            raise TypeError("the elicitation message must be a string")
        requested = _form_schema(schema)
        params = {"mode": "form", "message": message, "requestedSchema": requested}
        declared = self.client_capabilities
        required = missing_capabilities({"elicitation": {}}, declared) or missing_capabilities(
            {"elicitation": {"form": {}}}, declared
        )
        validator = self.server.elicitation_validator(requested)

        def parse(raw: Any) -> ElicitResult:
            result = ElicitResult.from_wire(raw)
            if result.accepted:
                problems = validator.problems(result.content or {})
                if problems:
                    raise ValueError("; ".join(problems))
            return result

        return await self.inputs.ask(ELICIT, params, required or None, parse, key)

    async def elicit_url(self, message: str, url: str, *, key: str | None = None) -> ElicitResult:
        """Send the user to ``url`` for an interaction the client must not see.

        Needs the client's ``elicitation.url`` capability. The URL must carry no
        credentials or personal data (spec ``client/elicitation.mdx`` §URL Mode).
        """
        params = {"mode": "url", "message": message, "url": url}
        required = missing_capabilities({"elicitation": {"url": {}}}, self.client_capabilities)
        return await self.inputs.ask(ELICIT, params, required or None, ElicitResult.from_wire, key)

    async def sample(
        self,
        messages: str | Sequence[str | PromptMessage | Content | dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        include_context: str | None = None,
        metadata: dict[str, Any] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> SamplingResult:
        """Ask the client's model for a message (``sampling/createMessage``).

        ``messages`` is a string (one user message) or a sequence of strings, content
        blocks, :class:`~mcpkit.types.content.PromptMessage` or ``SamplingMessage``
        dicts. Needs the client's ``sampling`` capability (``sampling.tools`` when
        ``tools`` are given, ``sampling.context`` for an ``include_context`` other than
        ``"none"``).
        """
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError("max_tokens must be a positive integer")
        params: dict[str, Any] = {"messages": _sampling_messages(messages)}
        optional: tuple[tuple[str, Any], ...] = (
            ("modelPreferences", model_preferences),
            ("systemPrompt", system_prompt),
            ("includeContext", include_context),
            ("temperature", temperature),
            ("maxTokens", max_tokens),
            ("stopSequences", list(stop_sequences) if stop_sequences is not None else None),
            ("metadata", metadata),
            ("tools", list(tools) if tools is not None else None),
            ("toolChoice", tool_choice),
        )
        for field, value in optional:
            if value is not None:
                params[field] = value
        needed: dict[str, Any] = {}
        if tools is not None or tool_choice is not None:
            needed["tools"] = {}
        if include_context not in (None, "none"):
            needed["context"] = {}
        required = missing_capabilities({"sampling": needed}, self.client_capabilities)
        return await self.inputs.ask(
            SAMPLE, params, required or None, SamplingResult.from_wire, key
        )

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """Ask the client for its roots (``roots/list``); needs the ``roots`` capability."""
        required = missing_capabilities({"roots": {}}, self.client_capabilities)
        return await self.inputs.ask(LIST_ROOTS, {}, required or None, parse_roots, key)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` when the request asked for progress.

        Without a ``progressToken`` in the request this does nothing. ``progress`` must
        increase with every call (``progress.mdx``).
        """
        token = self.meta.progress_token
        if token is None or self._done:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(
                "progress must increase with each notification "
                f"({progress} after {self._last_progress})"
            )
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.channel.send(jsonrpc.notification("notifications/progress", params))

    def wants_log(self, level: str) -> bool:
        """True when a message at ``level`` would be sent for this request."""
        threshold = self.meta.log_level
        if threshold is None or self._done:
            return False
        return LOG_SEVERITY[level] >= LOG_SEVERITY[threshold]

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the request's log level lets it through.

        Nothing is sent when the request carries no ``io.modelcontextprotocol/logLevel``.
        """
        if level not in LOG_SEVERITY:
            raise ValueError(f"unknown log level {level!r}")
        if not self.wants_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.channel.send(jsonrpc.notification("notifications/message", params))

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)


def missing_capabilities(required: dict[str, Any], declared: dict[str, Any]) -> dict[str, Any]:
    """The part of ``required`` that ``declared`` lacks (empty when all is declared).

    Nested objects name sub-capabilities (``{"sampling": {"tools": {}}}``). An empty
    ``elicitation`` declaration means form mode (spec ``client/elicitation.mdx``).
    """
    missing: dict[str, Any] = {}
    for name, sub in required.items():
        if name not in declared:
            missing[name] = sub if isinstance(sub, dict) else {}
            continue
        have = declared[name] if isinstance(declared[name], dict) else {}
        if isinstance(sub, dict) and sub:
            if name == "elicitation" and not have:
                have = {"form": {}}
            lacking = missing_capabilities(sub, have)
            if lacking:
                missing[name] = lacking
    return missing


def _form_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Check an elicitation schema: a flat object of primitive properties."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ValueError('an elicitation schema must be an object schema ("type": "object")')
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise ValueError("an elicitation schema needs a properties object")
    for name, prop in properties.items():
        if not isinstance(prop, dict) or prop.get("type") not in _FORM_TYPES:
            raise ValueError(
                f"elicitation property {name!r} must be a string, number, integer, boolean "
                "or enum array schema (no nesting)"
            )
    required = schema.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        raise ValueError("an elicitation schema's required must be a list of names")
    return schema


def _sampling_messages(
    messages: str | Sequence[str | PromptMessage | Content | dict[str, Any]],
) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        messages = [messages]
    result: list[dict[str, Any]] = []
    for message in messages:
        wire = message_wire(message)
        if wire is None:
            if not (isinstance(message, dict) and "role" in message and "content" in message):
                raise TypeError(
                    "sampling messages are strings, content blocks, PromptMessage or "
                    "{'role', 'content'} dicts"
                )
            wire = message
        result.append(wire)
    if not result:
        raise ValueError("sampling needs at least one message")
    return result
