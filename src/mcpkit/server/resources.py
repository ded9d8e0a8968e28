"""Resources and resource templates (spec ``server/resources.mdx``).

``@server.resource("test://static-text")`` registers a function that returns a
resource's contents; a URI with RFC 6570 variables (``test://template/{id}/data``,
``file:///{+path}``, ``test://search{?q}``) registers a template whose function takes
the variables as parameters (converted to ``int``/``float``/``bool`` when annotated so;
query variables need defaults). Either may also take a :class:`~mcpkit.Context`.

What a read function returns becomes ``contents``:

* ``str`` -> one text entry with the resource's ``mimeType``;
* ``bytes`` -> one ``blob`` entry (base64);
* :class:`~mcpkit.types.content.ResourceContents` or a list of them -> as given;
* anything else JSON-shaped (dict, list, dataclass, model) -> JSON text,
  ``application/json`` unless the resource names another type;
* ``None`` or an empty list -> the resource does not exist: -32602 with ``data.uri``.

A URI no resource or template matches is -32602 ``Resource not found`` with
``data: {"uri": ...}``, never an empty ``contents`` (§Error Handling). Template matching
keeps values inside the template's shape (see :mod:`mcpkit.server.uri_template`).
"""

from __future__ import annotations

import base64
import inspect
import re
import typing
from collections.abc import Callable
from typing import Any

from mcpkit.errors import InvalidParams
from mcpkit.protocol import codec
from mcpkit.server.caching import CacheHint
from mcpkit.server.registry import check_icons
from mcpkit.server.signature import UserFunction, to_json, unwrap_optional
from mcpkit.server.uri_template import UriTemplate
from mcpkit.types.content import ResourceContents

__all__ = ["Resource", "ResourceTemplate", "contents_for", "resource_not_found"]

_INT = re.compile(r"-?[0-9]{1,30}")
_FLOAT = re.compile(r"-?[0-9]{1,30}(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?")
_BOOLS = {"true": True, "false": False}

Converter = Callable[[str], Any]


def resource_not_found(uri: str) -> InvalidParams:
    """The error for a URI that names no resource (spec: -32602 with ``data.uri``)."""
    return InvalidParams("Resource not found", {"uri": uri})


class _Readable(UserFunction):
    """What static resources and templates share: metadata, wire form, calling the function."""

    __slots__ = (
        "_wire",
        "annotations",
        "cache",
        "description",
        "icons",
        "meta",
        "mime_type",
        "name",
        "required_capabilities",
        "title",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        title: str | None,
        description: str | None,
        mime_type: str | None,
        annotations: dict[str, Any] | None,
        icons: list[dict[str, Any]] | None,
        meta: dict[str, Any] | None,
        requires: dict[str, Any] | None,
        cache: CacheHint | None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a resource needs a non-empty name")
        self.name = name
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.annotations = annotations
        self.icons = check_icons(icons)
        self.meta = meta
        self.required_capabilities = requires or {}
        self.cache = cache
        super().__init__(fn)
        self._wire: dict[str, Any] = {}

    def _common_wire(self, wire: dict[str, Any]) -> dict[str, Any]:
        wire["name"] = self.name
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("annotations", self.annotations),
            ("icons", self.icons),
            ("_meta", self.meta),
        ):
            if value:
                wire[key] = value
        return wire

    @property
    def wire(self) -> dict[str, Any]:
        return self._wire


class Resource(_Readable):
    """A resource with a fixed URI."""

    __slots__ = ("size", "uri")

    def __init__(
        self, fn: Callable[..., Any], uri: str, *, size: int | None = None, **options: Any
    ) -> None:
        super().__init__(fn, **options)
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise ValueError("a resource size must be an integer >= 0")
        self.uri = uri
        self.size = size
        extra = _required_parameters(fn, exclude=self.context_param)
        if extra:
            raise TypeError(
                f"resource {uri!r}: parameters {extra} have no value; a fixed URI passes "
                "no arguments (use {variables} in the URI to make a template)"
            )
        wire = self._common_wire({"uri": uri})
        if size is not None:
            wire["size"] = size
        self._wire = wire

    async def read(
        self, uri: str, arguments: dict[str, Any], context: Any
    ) -> list[dict[str, Any]] | None:
        """The ``contents`` for this resource (a fixed URI takes no arguments)."""
        return contents_for(await self.call({}, context), uri, self.mime_type)


class ResourceTemplate(_Readable):
    """A family of resources described by an RFC 6570 URI template."""

    __slots__ = ("_converters", "_required", "template")

    def __init__(self, fn: Callable[..., Any], template: UriTemplate, **options: Any) -> None:
        super().__init__(fn, **options)
        self.template = template
        self._converters = _converters(fn, template, self.context_param)
        self._required = frozenset(_required_parameters(fn, exclude=self.context_param))
        self._wire = self._common_wire({"uriTemplate": template.template})

    @property
    def uri_template(self) -> str:
        return self.template.template

    def match(self, uri: str) -> dict[str, Any] | None:
        """The function's arguments for ``uri``, or None when it is not of this template."""
        values = self.template.match(uri)
        if values is None:
            return None
        arguments: dict[str, Any] = {}
        for name, convert in self._converters.items():
            if name not in values:
                continue
            try:
                arguments[name] = convert(values[name])
            except ValueError:
                return None
        missing = [n for n in self.template.variables if n not in values]
        if any(n in self._required for n in missing):
            return None
        return arguments

    async def read(
        self, uri: str, arguments: dict[str, Any], context: Any
    ) -> list[dict[str, Any]] | None:
        """The ``contents`` for ``uri``, given the arguments :meth:`match` returned."""
        return contents_for(await self.call(dict(arguments), context), uri, self.mime_type)


def _required_parameters(fn: Callable[..., Any], exclude: str | None) -> list[str]:
    return [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.name != exclude
        and p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]


def _converters(
    fn: Callable[..., Any], template: UriTemplate, context_param: str | None
) -> dict[str, Converter]:
    """For each template variable, how to turn its text into the parameter's value."""
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError):
        hints = {}
    parameters = {n: p for n, p in signature.parameters.items() if n != context_param}
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    variables = set(template.variables)
    converters: dict[str, Converter] = {}
    for name in template.variables:
        param = parameters.get(name)
        if param is None:
            if not accepts_any:
                raise TypeError(
                    f"resource template {template.template!r}: the function has no "
                    f"parameter {name!r}"
                )
            converters[name] = str
            continue
        if name in template.optional and param.default is inspect.Parameter.empty:
            raise TypeError(
                f"resource template {template.template!r}: optional variable {name!r} "
                "needs a default value in the function"
            )
        converters[name] = _converter(hints.get(name, str), template.template, name)
    unknown = [
        n
        for n, p in parameters.items()
        if n not in variables
        and p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if unknown:
        raise TypeError(
            f"resource template {template.template!r}: parameters {unknown} are not "
            "variables of the template"
        )
    return converters


def _converter(annotation: Any, template: str, name: str) -> Converter:
    annotation = unwrap_optional(annotation)
    if annotation is str or annotation is Any:
        return str
    if annotation is int:
        return _to_int
    if annotation is float:
        return _to_float
    if annotation is bool:
        return _to_bool
    raise TypeError(
        f"resource template {template!r}: variable {name!r} must be annotated "
        f"str, int, float or bool, not {annotation!r}"
    )


def _to_int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise ValueError(text)
    return int(text)


def _to_float(text: str) -> float:
    if not _FLOAT.fullmatch(text):
        raise ValueError(text)
    return float(text)


def _to_bool(text: str) -> bool:
    try:
        return _BOOLS[text]
    except KeyError:
        raise ValueError(text) from None


def contents_for(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]] | None:
    """The ``contents`` array for a read function's return value (None: no such resource)."""
    if value is None:
        return None
    if isinstance(value, ResourceContents):
        return [value.wire]
    if isinstance(value, str):
        return [_entry(uri, mime_type, "text", value)]
    if isinstance(value, bytes | bytearray | memoryview):
        data = base64.b64encode(bytes(value)).decode("ascii")
        return [_entry(uri, mime_type, "blob", data)]
    if isinstance(value, list | tuple):
        if not value:
            return None
        if all(isinstance(item, ResourceContents) for item in value):
            return [item.wire for item in value]
    text = codec.dumps(to_json(value)).decode()
    return [_entry(uri, mime_type or "application/json", "text", text)]


def _entry(uri: str, mime_type: str | None, field: str, data: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        entry["mimeType"] = mime_type
    entry[field] = data
    return entry
