"""The :class:`Server`: what an MCP server offers and who it says it is.

Registration happens here; answering requests happens in
:mod:`mcpkit.server.dispatch`, which knows no transport. A transport drives a server
through :meth:`Server.handle_request` and :meth:`Server.handle_notification`.

>>> server = Server("notes", "1.0.0")
>>> @server.tool
... def read_note(title: str) -> str:
...     '''Read a note by its title.'''
...     return "..."
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from mcpkit.protocol import versions
from mcpkit.protocol.meta import SERVER_INFO
from mcpkit.server.caching import CachePolicy
from mcpkit.server.dispatch import Dispatcher
from mcpkit.server.registry import Tool, ToolRegistry
from mcpkit.server.signature import inspect_function

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["Server"]


class Server:
    """An MCP server: tools (and later resources and prompts) plus its identity."""

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        supported_versions: Sequence[str] = versions.MODERN_VERSIONS,
        cache: CachePolicy | None = None,
    ) -> None:
        unknown = [v for v in supported_versions if v not in versions.ALL_VERSIONS]
        if unknown:
            raise ValueError(f"unknown protocol versions: {unknown}")
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.website_url = website_url
        self.icons = icons
        self.supported_versions: tuple[str, ...] = tuple(
            v for v in supported_versions if versions.is_modern(v)
        )
        if not self.supported_versions:
            raise ValueError("a server must support at least one modern protocol version")
        self.cache = cache or CachePolicy()
        self.tools = ToolRegistry()
        self._capabilities: dict[str, Any] | None = None
        self.tools.on_change(self._invalidate)
        self._dispatcher = Dispatcher(self)
        self.handle_request = self._dispatcher.handle_request
        self.handle_notification = self._dispatcher.handle_notification

    # -- identity ---------------------------------------------------------------------

    def server_info(self) -> dict[str, Any]:
        """The ``Implementation`` object naming this server."""
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("websiteUrl", self.website_url),
            ("icons", self.icons),
        ):
            if value is not None:
                info[key] = value
        return info

    def result_meta(self) -> dict[str, Any]:
        """The ``_meta`` stamped on every result."""
        return {SERVER_INFO: self.server_info()}

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities, derived from what is registered."""
        if self._capabilities is None:
            caps: dict[str, Any] = {}
            if len(self.tools):
                caps["tools"] = {}
            self._capabilities = caps
        return self._capabilities

    def _invalidate(self) -> None:
        self._capabilities = None
        self._dispatcher.refresh()

    # -- tools ------------------------------------------------------------------------

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        requires: dict[str, Any] | None = None,
    ) -> Tool:
        """Register ``fn`` as a tool; its schema and description come from its signature.

        ``requires`` names client capabilities the tool needs (e.g. ``{"sampling": {}}``):
        a call from a client that did not declare them is refused with -32021.
        A duplicate name raises ``ValueError``.
        """
        info = inspect_function(fn, name)
        tool = Tool(
            fn,
            info,
            name=info.name,
            title=title,
            description=description if description is not None else info.description,
            input_schema=input_schema if input_schema is not None else info.input_schema,
            annotations=annotations,
            icons=icons,
            meta=meta,
            required_capabilities=requires,
        )
        self.tools.add(tool)
        return tool

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        requires: dict[str, Any] | None = None,
    ) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Decorator form of :meth:`add_tool`; returns the function unchanged."""

        def register(function: F) -> F:
            self.add_tool(function, **options)
            return function

        return register(fn) if fn is not None else register

    def remove_tool(self, name: str) -> None:
        self.tools.remove(name)

    # -- running ----------------------------------------------------------------------

    def run(self) -> None:
        """Serve on stdin/stdout until the client closes stdin."""
        from mcpkit.transports.stdio import run_stdio

        run_stdio(self)
