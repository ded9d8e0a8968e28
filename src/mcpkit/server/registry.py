"""What a server offers: tools, each compiled once at registration.

A :class:`Tool` holds the function, its wire definition (built once and reused for every
``tools/list``), its compiled argument schema, and how to turn its return value into a
``CallToolResult`` (spec ``server/tools.mdx``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Iterator
from typing import Any

from mcpkit.errors import ToolError
from mcpkit.protocol import codec
from mcpkit.protocol.schema import CompiledSchema, compile_schema
from mcpkit.server.signature import ArgumentBinder, FunctionInfo, to_json
from mcpkit.types.content import Content, ToolResult

logger = logging.getLogger("mcpkit.server")

__all__ = ["Tool", "ToolRegistry", "call_result"]


class Tool:
    """One registered tool."""

    __slots__ = (
        "_binder",
        "_validator",
        "_wire",
        "annotations",
        "context_param",
        "description",
        "fn",
        "icons",
        "input_schema",
        "is_async",
        "meta",
        "name",
        "output_schema",
        "required_capabilities",
        "title",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        info: FunctionInfo,
        *,
        name: str,
        description: str | None,
        input_schema: dict[str, Any],
        title: str | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        required_capabilities: dict[str, Any] | None = None,
    ) -> None:
        self.fn = fn
        self.name = name
        self.title = title
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        self.required_capabilities = required_capabilities or {}
        self.is_async = info.is_async
        self.context_param = info.context_param
        self._binder: ArgumentBinder = info.binder
        self._validator: CompiledSchema = compile_schema(input_schema)
        self._wire = self._build_wire()

    def _build_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            wire["title"] = self.title
        wire["description"] = self.description or ""
        wire["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            wire["outputSchema"] = self.output_schema
        if self.annotations:
            wire["annotations"] = self.annotations
        if self.icons:
            wire["icons"] = self.icons
        if self.meta:
            wire["_meta"] = self.meta
        return wire

    @property
    def wire(self) -> dict[str, Any]:
        """The ``Tool`` object for ``tools/list``."""
        return self._wire

    def problems(self, arguments: dict[str, Any]) -> list[str]:
        """What is wrong with ``arguments``, ordered for the model; empty when valid."""
        return self._validator.problems(arguments)

    async def invoke(self, arguments: dict[str, Any], context: Any) -> Any:
        """Run the function; sync functions run in a worker thread, off the event loop."""
        kwargs = self._binder.bind(arguments)
        if self.context_param is not None:
            kwargs[self.context_param] = context
        if self.is_async:
            return await self.fn(**kwargs)
        return await asyncio.to_thread(functools.partial(self.fn, **kwargs))


class ToolRegistry:
    """Tools by name, in registration order (a deterministic ``tools/list``)."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._listeners: list[Callable[[], None]] = []

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._changed()

    def remove(self, name: str) -> Tool:
        try:
            tool = self._tools.pop(name)
        except KeyError:
            raise KeyError(f"no tool named {name!r}") from None
        self._changed()
        return tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools


def error_result(message: str) -> dict[str, Any]:
    """A tool execution error the model can read (``isError: true``)."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def call_result(value: Any) -> dict[str, Any]:
    """Turn a tool's return value into a ``CallToolResult`` (without ``resultType``).

    ``str`` -> one text block; numbers and booleans -> their JSON text; ``None`` -> no
    content; a :class:`Content` or a list of them -> passed through; a
    :class:`ToolResult` -> exactly as given; dicts, lists, dataclasses and pydantic
    models -> ``structuredContent`` plus a text copy for clients that only read text.
    """
    kind = type(value)
    if kind is str:
        return {"content": [{"type": "text", "text": value}]}
    if kind is int or kind is float or kind is bool:
        return {"content": [{"type": "text", "text": codec.dumps(value).decode()}]}
    if value is None:
        return {"content": []}
    if isinstance(value, ToolResult):
        return _explicit(value)
    if isinstance(value, Content):
        return {"content": [value.wire]}
    if isinstance(value, list | tuple) and value and all(isinstance(v, Content) for v in value):
        return {"content": [v.wire for v in value]}
    data = to_json(value)
    return {
        "content": [{"type": "text", "text": codec.dumps(data).decode()}],
        "structuredContent": data,
    }


def _explicit(result: ToolResult) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "content": [c.wire if isinstance(c, Content) else c for c in result.content]
    }
    if result.structured is not None:
        wire["structuredContent"] = to_json(result.structured)
    if result.is_error:
        wire["isError"] = True
    if result.meta:
        wire["_meta"] = result.meta
    return wire


def exception_result(exc: BaseException, tool: str) -> dict[str, Any]:
    """The ``isError`` result for a tool that raised; unexpected exceptions are logged."""
    if not isinstance(exc, ToolError):
        logger.exception("tool %r raised", tool, exc_info=exc)
    message = str(exc) or type(exc).__name__
    return error_result(message)
