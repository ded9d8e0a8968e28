"""The :class:`Server`: what an MCP server offers and who it says it is.

Registration happens here; answering requests happens in
:mod:`mcpkit.server.dispatch`, which knows no transport. A transport drives a server
through :meth:`Server.handle_request` and :meth:`Server.handle_notification`.

>>> server = Server("notes", "1.0.0")
>>> @server.tool
... def read_note(title: str) -> str:
...     '''Read a note by its title.'''
...     return "..."

Tools, resources, resource templates and prompts may be added and removed while the
server runs; each change is published on the server's :class:`~mcpkit.server.bus.Bus`
as a ``list_changed`` event, which ``subscriptions/listen`` streams deliver to the
clients that asked for it. :meth:`Server.notify_resource_updated` announces new contents
of one resource the same way.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar, overload

from mcpkit.protocol import codec, versions
from mcpkit.protocol.meta import SERVER_INFO
from mcpkit.protocol.schema import CompiledSchema, compile_schema
from mcpkit.server.bus import (
    PROMPTS_CHANGED,
    RESOURCE_UPDATED,
    RESOURCES_CHANGED,
    TOOLS_CHANGED,
    Bus,
    BusSubscription,
    Event,
    InMemoryBus,
)
from mcpkit.server.caching import CacheHint, CachePolicy
from mcpkit.server.completion import Completer
from mcpkit.server.dispatch import Dispatcher
from mcpkit.server.prompts import Prompt
from mcpkit.server.registry import Registry, Tool
from mcpkit.server.request_state import DEFAULT_TTL, RequestStateSealer, configured_state_key
from mcpkit.server.resources import Resource, ResourceTemplate
from mcpkit.server.signature import inspect_function, output_schema_for
from mcpkit.server.uri_template import UriTemplate
from mcpkit.transports.session import DEFAULT_REQUEST_TIMEOUT

F = TypeVar("F", bound=Callable[..., Any])

_MAX_CACHED_FORMS = 256

__all__ = ["Server"]


class Server:
    """An MCP server: tools, resources, prompts and completions, plus its identity.

    ``page_size`` splits every list result into pages of that many items with opaque
    ``nextCursor`` cursors (None: one page). ``cache`` sets the cache hints of cacheable
    results per server and per method. ``bus`` carries change events to
    ``subscriptions/listen`` streams (in-memory by default; a shared bus for replicas).
    ``state_key`` seals ``requestState`` for multi round-trip requests (default: the
    ``MCPKIT_STATE_KEY`` environment variable, else a random per-process key), valid for
    ``state_ttl`` seconds.

    ``supported_versions`` names the protocol revisions served. By default a server is
    dual-era: modern requests (per-request ``_meta``) and legacy clients (an
    ``initialize`` handshake, then a session) on the same process or endpoint, as
    ``basic/versioning.mdx`` §Backward Compatibility allows. Listing only modern versions
    makes it modern-only: ``initialize`` is then answered with -32022 naming them.
    ``input_timeout`` bounds how long a legacy session's ``ctx.elicit``/``sample``/
    ``list_roots`` waits for the client's answer.
    """

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
        supported_versions: Sequence[str] = versions.ALL_VERSIONS,
        cache: CachePolicy | None = None,
        page_size: int | None = None,
        bus: Bus | None = None,
        state_key: bytes | str | None = None,
        state_ttl: float = DEFAULT_TTL,
        input_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        unknown = [v for v in supported_versions if v not in versions.ALL_VERSIONS]
        if unknown:
            raise ValueError(f"unknown protocol versions: {unknown}")
        if page_size is not None and (isinstance(page_size, bool) or page_size < 1):
            raise ValueError("page_size must be a positive integer or None")
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
        self.legacy_versions: tuple[str, ...] = tuple(
            v for v in versions.LEGACY_VERSIONS if v in supported_versions
        )
        if input_timeout <= 0:
            raise ValueError("input_timeout must be positive")
        self.input_timeout = input_timeout
        self.cache = cache or CachePolicy()
        self.page_size = page_size
        self.bus: Bus = bus if bus is not None else InMemoryBus()
        self.state_sealer = RequestStateSealer(
            configured_state_key(state_key), audience=name, ttl=state_ttl
        )
        self.tools: Registry[Tool] = Registry("tool")
        self.resources: Registry[Resource] = Registry("resource")
        self.resource_templates: Registry[ResourceTemplate] = Registry("resource template")
        self.prompts: Registry[Prompt] = Registry("prompt")
        self.completers: dict[tuple[str, str, str], Completer] = {}
        self._capabilities: dict[str, Any] | None = None
        self._listeners: set[BusSubscription] = set()
        self._closing = False
        self._forms: dict[bytes, CompiledSchema] = {}
        self.tools.on_change(lambda: self._changed(TOOLS_CHANGED))
        self.prompts.on_change(lambda: self._changed(PROMPTS_CHANGED))
        self.resources.on_change(lambda: self._changed(RESOURCES_CHANGED))
        self.resource_templates.on_change(lambda: self._changed(RESOURCES_CHANGED))
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
        """The server capabilities, derived from what is registered.

        Lists that can change announce it (``listChanged``): every runtime change is
        published to ``subscriptions/listen`` streams. Resources also support
        ``subscribe`` (``resourceSubscriptions`` plus :meth:`notify_resource_updated`).
        Completions are offered whenever there is something to complete (prompts or
        resource templates); logging is always available through ``ctx.log``.
        """
        if self._capabilities is None:
            caps: dict[str, Any] = {}
            if len(self.tools):
                caps["tools"] = {"listChanged": True}
            if len(self.prompts):
                caps["prompts"] = {"listChanged": True}
            if len(self.resources) or len(self.resource_templates):
                caps["resources"] = {"listChanged": True, "subscribe": True}
            if len(self.prompts) or len(self.resource_templates):
                caps["completions"] = {}
            caps["logging"] = {}
            self._capabilities = caps
        return self._capabilities

    def _changed(self, method: str) -> None:
        self._capabilities = None
        self._dispatcher.refresh()
        self.bus.publish(Event(method))

    # -- tools ------------------------------------------------------------------------

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | Literal[False] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        requires: dict[str, Any] | None = None,
    ) -> Tool:
        """Register ``fn`` as a tool; its schema and description come from its signature.

        ``output_schema`` defaults to one derived from the return annotation (for
        returns that become ``structuredContent``); pass a schema to set it or ``False``
        for none. ``annotations`` holds ``ToolAnnotations`` hints (``readOnlyHint``,
        ``destructiveHint``, ``idempotentHint``, ``openWorldHint``, ``title``).
        ``requires`` names client capabilities the tool needs (e.g. ``{"sampling": {}}``):
        a call from a client that did not declare them is refused with -32021.
        A duplicate or invalid name, an invalid schema or a bad ``x-mcp-header`` raises.
        """
        info = inspect_function(fn, name)
        if output_schema is None:
            derived = output_schema_for(info.return_annotation)
        else:
            derived = output_schema or None
        tool = Tool(
            fn,
            info,
            name=info.name,
            title=title,
            description=description if description is not None else info.description,
            input_schema=input_schema if input_schema is not None else info.input_schema,
            output_schema=derived,
            annotations=annotations,
            icons=icons,
            meta=meta,
            required_capabilities=requires,
        )
        self.tools.add(tool.name, tool)
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
        output_schema: dict[str, Any] | Literal[False] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        requires: dict[str, Any] | None = None,
    ) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Decorator form of :meth:`add_tool`; returns the function unchanged."""
        register: Callable[[F], F] = _registering(lambda f: self.add_tool(f, **options))
        return register(fn) if fn is not None else register

    def remove_tool(self, name: str) -> None:
        self.tools.remove(name)

    def param_headers(
        self, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[dict[str, Any], frozenset[str]]:
        """The ``Mcp-Param-*`` headers a ``tools/call`` of ``tool`` must carry.

        Returns header name -> the argument value it mirrors (present, non-null ones
        only) and every header name the tool declares, so an HTTP transport can check
        the headers against the body (``basic/transports/streamable-http.mdx`` §Server
        Behavior for Custom Headers). An unknown tool declares none.
        """
        found = self.tools.get(tool)
        if found is None or not found.header_params:
            return {}, frozenset()
        expected: dict[str, Any] = {}
        for header, path in found.header_params.items():
            value: Any = arguments
            for key in path:
                value = value.get(key) if isinstance(value, Mapping) else None
            if value is not None:
                expected[header] = value
        return expected, found.header_names

    # -- resources --------------------------------------------------------------------

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        size: int | None = None,
        meta: dict[str, Any] | None = None,
        requires: dict[str, Any] | None = None,
        cache: CacheHint | None = None,
    ) -> Resource | ResourceTemplate:
        """Register ``fn`` as the resource at ``uri``, or as a template if ``uri`` has
        ``{variables}`` (see :mod:`mcpkit.server.resources`).

        The name defaults to the function's name, the description to its docstring.
        ``cache`` overrides the server's cache hint for reads of this resource.
        """
        template = UriTemplate(uri)
        options: dict[str, Any] = {
            "name": name or getattr(fn, "__name__", None) or uri,
            "title": title,
            "description": description if description is not None else _doc(fn),
            "mime_type": mime_type,
            "annotations": annotations,
            "icons": icons,
            "meta": meta,
            "requires": requires,
            "cache": cache,
        }
        if template.is_template:
            if size is not None:
                raise ValueError("a resource template has no size")
            item = ResourceTemplate(fn, template, **options)
            self.resource_templates.add(uri, item)
            return item
        resource = Resource(fn, uri, size=size, **options)
        self.resources.add(uri, resource)
        return resource

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Decorator form of :meth:`add_resource`; returns the function unchanged."""
        return _registering(lambda f: self.add_resource(f, uri, **options))

    def remove_resource(self, uri: str) -> None:
        """Remove the resource or template registered under ``uri``."""
        if uri in self.resources:
            self.resources.remove(uri)
        else:
            self.resource_templates.remove(uri)

    def find_resource(self, uri: str) -> tuple[Resource | ResourceTemplate, dict[str, Any]] | None:
        """The resource serving ``uri`` and the arguments to read it with, or None.

        A fixed URI wins over templates; templates are tried in registration order.
        """
        resource = self.resources.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.resource_templates:
            arguments = template.match(uri)
            if arguments is not None:
                return template, arguments
        return None

    def notify_resource_updated(self, uri: str) -> None:
        """Tell listen streams subscribed to ``uri`` that its contents changed."""
        self.bus.publish(Event(RESOURCE_UPDATED, uri))

    # -- prompts ----------------------------------------------------------------------

    def add_prompt(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        requires: dict[str, Any] | None = None,
    ) -> Prompt:
        """Register ``fn`` as a prompt (see :mod:`mcpkit.server.prompts`)."""
        prompt = Prompt(
            fn,
            name=name,
            title=title,
            description=description,
            icons=icons,
            meta=meta,
            requires=requires,
        )
        self.prompts.add(prompt.name, prompt)
        return prompt

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        requires: dict[str, Any] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Decorator form of :meth:`add_prompt`; returns the function unchanged."""
        register: Callable[[F], F] = _registering(lambda f: self.add_prompt(f, **options))
        return register(fn) if fn is not None else register

    def remove_prompt(self, name: str) -> None:
        self.prompts.remove(name)

    # -- completion -------------------------------------------------------------------

    def completion(
        self,
        *,
        argument: str,
        prompt: str | None = None,
        template: str | None = None,
    ) -> Callable[[F], F]:
        """Register a function suggesting values for a prompt argument or template variable.

        Exactly one of ``prompt`` (a prompt name) or ``template`` (a URI template as
        registered) names what it completes (see :mod:`mcpkit.server.completion`).
        """
        if (prompt is None) == (template is None):
            raise ValueError("give exactly one of prompt= or template=")
        key = (
            ("ref/prompt", prompt, argument)
            if prompt is not None
            else ("ref/resource", str(template), argument)
        )

        def register(function: F) -> F:
            if key in self.completers:
                raise ValueError(f"a completion for {key[1]!r} argument {argument!r} exists")
            self.completers[key] = Completer(function)
            return function

        return register

    # -- subscriptions ----------------------------------------------------------------

    @asynccontextmanager
    async def open_subscription(
        self, accepts: Callable[[Event], bool]
    ) -> AsyncIterator[BusSubscription]:
        """A bus subscription that :meth:`shutdown` ends gracefully."""
        subscription = self.bus.subscribe(accepts)
        self._listeners.add(subscription)
        if self._closing:
            subscription.close()
        try:
            yield subscription
        finally:
            self._listeners.discard(subscription)
            subscription.close()

    @property
    def listener_count(self) -> int:
        """How many ``subscriptions/listen`` streams are open."""
        return len(self._listeners)

    def shutdown(self) -> None:
        """End every open listen stream gracefully (each gets its completion result).

        Transports call this when they stop; streams opened afterwards end at once.
        """
        self._closing = True
        for subscription in list(self._listeners):
            subscription.close()

    # -- elicitation forms ------------------------------------------------------------

    def elicitation_validator(self, schema: dict[str, Any]) -> CompiledSchema:
        """A compiled validator for an elicitation schema, cached by its content."""
        key = codec.dumps(schema)
        validator = self._forms.get(key)
        if validator is None:
            if len(self._forms) >= _MAX_CACHED_FORMS:
                self._forms.clear()
            validator = self._forms[key] = compile_schema(schema)
        return validator

    # -- running ----------------------------------------------------------------------

    def run(self) -> None:
        """Serve on stdin/stdout until the client closes stdin."""
        from mcpkit.transports.stdio import run_stdio

        run_stdio(self)


def _registering(add: Callable[[Callable[..., Any]], object]) -> Callable[[F], F]:
    """A decorator that registers a function with ``add`` and returns it unchanged."""

    def register(function: F) -> F:
        add(function)
        return function

    return register


def _doc(fn: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(fn)
    return doc.strip() if doc else None
