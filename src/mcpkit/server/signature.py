"""From a Python function to an MCP tool: JSON Schema from type hints, and back.

:func:`inspect_function` reads a function once, at registration, and returns its input
schema (JSON Schema 2020-12) plus an :class:`ArgumentBinder` that turns validated JSON
arguments into the Python values the function expects (Enum members, dataclasses,
pydantic models, tuples). Supported annotations: ``int``, ``float``, ``str``, ``bool``,
``None``, ``list``/``set``/``tuple``/``dict`` and their generic forms, ``Optional`` and
unions, ``Literal``, ``Enum``, ``TypedDict``, dataclasses, pydantic models (when pydantic
is installed) and ``Any``. A description comes from ``Annotated[T, "text"]``, from any
``Annotated`` metadata object with a ``description`` attribute (pydantic's ``Field``
among them), or from the docstring's ``Args:`` section. ``Annotated[str, Header("Region")]``
marks a parameter for ``x-mcp-header`` (see :mod:`mcpkit.server.headers`).

:func:`output_schema_for` derives a tool's ``outputSchema`` from its return annotation
when the return value becomes ``structuredContent`` (dicts, TypedDicts, dataclasses,
pydantic models, lists of them). :func:`to_json` is the reverse direction for return
values: dataclasses, pydantic models and Enums become plain JSON data.
:class:`UserFunction` is how every registered function is called (tools, prompts,
resources, completions): with the request's Context when it asks for one, and off the
event loop when it is synchronous.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import enum
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin

from mcpkit.protocol import codec
from mcpkit.protocol.jsonrpc import MAX_SAFE_INTEGER
from mcpkit.server.headers import ANNOTATION, Header
from mcpkit.types.content import Content, ToolResult

JSONSchema = dict[str, Any]
Converter = Callable[[Any], Any]

__all__ = [
    "ArgumentBinder",
    "FunctionInfo",
    "UserFunction",
    "context_parameter",
    "inspect_function",
    "is_async_callable",
    "output_schema_for",
    "parse_docstring",
    "schema_for",
    "strip_annotated",
    "to_json",
    "unwrap_optional",
]

_NONE_TYPE = type(None)
_ARGS_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_SECTION = re.compile(r"^\s*[A-Z][A-Za-z ]*:\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionInfo:
    """What registration learns from a function."""

    name: str
    description: str | None
    input_schema: JSONSchema
    binder: ArgumentBinder
    is_async: bool
    context_param: str | None
    return_annotation: Any


class ArgumentBinder:
    """Turns validated JSON arguments into keyword arguments for the function."""

    __slots__ = ("_converters",)

    def __init__(self, converters: dict[str, Converter]) -> None:
        self._converters = converters

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if not self._converters:
            return dict(arguments)
        kwargs = dict(arguments)
        for name, convert in self._converters.items():
            if name in kwargs:
                kwargs[name] = convert(kwargs[name])
        return kwargs


class UserFunction:
    """A function an author registered: a tool, prompt, resource or completion.

    :meth:`call` hands the request's :class:`~mcpkit.Context` to the parameter annotated
    for it, and runs a sync function in a worker thread, off the event loop.
    """

    __slots__ = ("context_param", "fn", "is_async")

    def __init__(self, fn: Callable[..., Any], info: FunctionInfo | None = None) -> None:
        self.fn = fn
        if info is None:
            self.is_async = is_async_callable(fn)
            self.context_param = context_parameter(fn)
        else:
            self.is_async = info.is_async
            self.context_param = info.context_param

    async def call(self, kwargs: dict[str, Any], context: Any, *args: Any) -> Any:
        """``fn(*args, **kwargs)``, plus the context when it asks for one."""
        if self.context_param is not None:
            kwargs[self.context_param] = context
        if self.is_async:
            return await self.fn(*args, **kwargs)
        return await asyncio.to_thread(functools.partial(self.fn, *args, **kwargs))


def context_parameter(fn: Callable[..., Any]) -> str | None:
    """The name of the parameter annotated with :class:`mcpkit.Context`, if any."""
    hints = _hints(fn)
    for name, annotation in hints.items():
        if name != "return" and _is_context(annotation):
            return name
    return None


def inspect_function(fn: Callable[..., Any], name: str | None = None) -> FunctionInfo:
    """Read ``fn``'s signature and docstring once."""
    signature = inspect.signature(fn)
    hints = _hints(fn)
    doc_description, arg_docs = parse_docstring(inspect.getdoc(fn))
    properties: dict[str, JSONSchema] = {}
    required: list[str] = []
    converters: dict[str, Converter] = {}
    context_param: str | None = None
    accepts_extra = False
    for param in signature.parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_extra = True
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(
                f"{fn.__qualname__}: positional-only parameter {param.name!r} "
                "cannot be a tool argument"
            )
        annotation = hints.get(param.name, Any)
        if _is_context(annotation):
            context_param = param.name
            continue
        schema = schema_for(annotation)
        if "description" not in schema and param.name in arg_docs:
            schema = {**schema, "description": arg_docs[param.name]}
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        else:
            default = _json_default(param.default)
            if default is not _NO_DEFAULT:
                schema = {**schema, "default": default}
        properties[param.name] = schema
        convert = converter_for(annotation)
        if convert is not None:
            converters[param.name] = convert
    input_schema: JSONSchema = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    if not accepts_extra:
        input_schema["additionalProperties"] = False
    return FunctionInfo(
        name=name or fn.__name__,
        description=doc_description,
        input_schema=input_schema,
        binder=ArgumentBinder(converters),
        is_async=is_async_callable(fn),
        context_param=context_param,
        return_annotation=hints.get("return", inspect.Signature.empty),
    )


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """True for coroutine functions and objects whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    plain = inspect.isfunction(fn) or inspect.ismethod(fn)
    call = None if plain else type(fn).__dict__.get("__call__")
    return call is not None and inspect.iscoroutinefunction(call)


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:
        raise TypeError(
            f"cannot read the type hints of {getattr(fn, '__qualname__', fn)!r}: {exc}"
        ) from exc


def _is_context(annotation: Any) -> bool:
    from mcpkit.server.context import Context

    annotation = strip_annotated(annotation)[0]
    return isinstance(annotation, type) and issubclass(annotation, Context)


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """The description (text before any section) and the ``Args:`` entries."""
    if not doc:
        return None, {}
    lines = doc.splitlines()
    description: list[str] = []
    args: dict[str, str] = {}
    index = 0
    while index < len(lines) and not _SECTION.match(lines[index]):
        description.append(lines[index])
        index += 1
    current: str | None = None
    in_args = False
    for line in lines[index:]:
        if _ARGS_SECTION.match(line):
            in_args, current = True, None
            continue
        if _SECTION.match(line) and not line.startswith((" ", "\t")):
            in_args, current = False, None
            continue
        if not in_args:
            continue
        match = _ARG_LINE.match(line)
        if match and (len(line) - len(line.lstrip())) <= 4:
            current = match.group(1).lstrip("*")
            args[current] = match.group(2).strip()
        elif current and line.strip():
            args[current] = (args[current] + " " + line.strip()).strip()
    text = "\n".join(description).strip()
    return (text or None), args


_NO_DEFAULT = object()


def _json_default(value: Any) -> Any:
    """The default as JSON, or _NO_DEFAULT when it has no JSON form."""
    try:
        converted = to_json(value)
        codec.dumps(converted)
    except (TypeError, ValueError):
        return _NO_DEFAULT
    return converted


def strip_annotated(annotation: Any) -> tuple[Any, str | None, Header | None]:
    """``Annotated[T, ...]`` -> (T, description, :class:`Header`) found in its metadata."""
    description: str | None = None
    header: Header | None = None
    while get_origin(annotation) is typing.Annotated:
        base, *extras = get_args(annotation)
        for extra in extras:
            if isinstance(extra, str):
                description = extra
            elif isinstance(extra, Header):
                header = extra
            else:
                found = getattr(extra, "description", None)
                if isinstance(found, str):
                    description = found
        annotation = base
    return annotation, description, header


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def unwrap_optional(annotation: Any) -> Any:
    """``T | None`` (or ``Optional[T]``) -> ``T``; any other annotation as it is."""
    if _is_union(get_origin(annotation)):
        members = [m for m in get_args(annotation) if m is not _NONE_TYPE]
        if len(members) == 1:
            return members[0]
    return annotation


def _pydantic_model(annotation: Any) -> bool:
    return (
        isinstance(annotation, type)
        and hasattr(annotation, "model_json_schema")
        and hasattr(annotation, "model_validate")
    )


def _is_typeddict(annotation: Any) -> bool:
    return isinstance(annotation, type) and typing.is_typeddict(annotation)


def schema_for(annotation: Any) -> JSONSchema:
    """JSON Schema 2020-12 for a Python annotation."""
    annotation, description, header = strip_annotated(annotation)
    schema = _schema_for_bare(annotation)
    if description is not None:
        schema = {**schema, "description": description}
    if header is not None:
        schema = {**schema, ANNOTATION: header.name}
        kinds = schema.get("type")
        if (kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds)) and not (
            "minimum" in schema or "maximum" in schema
        ):
            # Header values must be exact in every client (spec: the IEEE 754 safe range).
            schema = {**schema, "minimum": -MAX_SAFE_INTEGER, "maximum": MAX_SAFE_INTEGER}
    return schema


# pydantic models describe themselves differently as input and as output (aliases,
# computed fields); output schemas ask for the serialization form.
_PYDANTIC_MODE: contextvars.ContextVar[str] = contextvars.ContextVar(
    "pydantic_mode", default="validation"
)


def output_schema_for(annotation: Any) -> JSONSchema | None:
    """The ``outputSchema`` for a return annotation, or None when there is none.

    Only annotations whose values always become ``structuredContent`` get one: mappings,
    TypedDicts, dataclasses, pydantic models, sequences of non-content values, and unions
    of those. Text-like returns (str, numbers, None, content blocks, ToolResult, Any)
    have no structured form and so no output schema.
    """
    annotation = strip_annotated(annotation)[0]
    if annotation is inspect.Signature.empty or not _structured(annotation):
        return None
    token = _PYDANTIC_MODE.set("serialization")
    try:
        return schema_for(annotation)
    finally:
        _PYDANTIC_MODE.reset(token)


def _structured(annotation: Any) -> bool:
    annotation = strip_annotated(annotation)[0]
    origin = get_origin(annotation)
    if _is_union(origin):
        return all(_structured(member) for member in get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, Content | ToolResult):
        return False
    if (
        _is_typeddict(annotation)
        or _pydantic_model(annotation)
        or (dataclasses.is_dataclass(annotation) and isinstance(annotation, type))
    ):
        return True
    if annotation in (dict, list, tuple, set, frozenset) or origin in (dict, Mapping):
        return True
    if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence):
        return all(arg is Ellipsis or not _content_like(arg) for arg in get_args(annotation))
    return False


def _content_like(annotation: Any) -> bool:
    annotation = strip_annotated(annotation)[0]
    if _is_union(get_origin(annotation)):
        return any(_content_like(member) for member in get_args(annotation))
    return annotation is Any or (isinstance(annotation, type) and issubclass(annotation, Content))


def _schema_for_bare(annotation: Any) -> JSONSchema:
    if annotation is Any or annotation is inspect.Parameter.empty or annotation is object:
        return {}
    if annotation is None or annotation is _NONE_TYPE:
        return {"type": "null"}
    simple = _SIMPLE.get(annotation)
    if simple is not None:
        return dict(simple)
    origin = get_origin(annotation)
    if _is_union(origin):
        return _union_schema(get_args(annotation))
    if origin is Literal:
        return _enum_schema(list(get_args(annotation)))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        schema = _enum_schema([member.value for member in annotation])
        return {"title": annotation.__name__, **schema}
    if _is_typeddict(annotation):
        return _typeddict_schema(annotation)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return _dataclass_schema(annotation)
    if _pydantic_model(annotation):
        return _pydantic_schema(annotation)
    if origin in (list, set, frozenset, Sequence, typing.Sequence) or annotation in (
        list,
        set,
        frozenset,
    ):
        args = get_args(annotation)
        array: JSONSchema = {"type": "array"}
        if args:
            array["items"] = schema_for(args[0])
        if origin in (set, frozenset) or annotation in (set, frozenset):
            array["uniqueItems"] = True
        return array
    if origin is tuple or annotation is tuple:
        return _tuple_schema(get_args(annotation))
    if origin in (dict, Mapping) or annotation is dict:
        args = get_args(annotation)
        mapping: JSONSchema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            mapping["additionalProperties"] = schema_for(args[1])
        return mapping
    raise TypeError(f"cannot derive a JSON Schema for {annotation!r}")


_SIMPLE: dict[Any, JSONSchema] = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
    bytes: {"type": "string", "contentEncoding": "base64"},
}


def _union_schema(members: tuple[Any, ...]) -> JSONSchema:
    options = [schema_for(member) for member in members]
    types_only = [o for o in options if set(o) == {"type"} and isinstance(o["type"], str)]
    if len(types_only) == len(options):
        return {"type": [o["type"] for o in options]}
    return {"anyOf": options}


def _enum_schema(values: list[Any]) -> JSONSchema:
    schema: JSONSchema = {"enum": values}
    kinds = {_json_type(v) for v in values}
    if len(kinds) == 1:
        (kind,) = kinds
        if kind is not None:
            schema = {"type": kind, "enum": values}
    return schema


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return None


def _tuple_schema(args: tuple[Any, ...]) -> JSONSchema:
    if not args:
        return {"type": "array"}
    if len(args) == 2 and args[1] is Ellipsis:
        return {"type": "array", "items": schema_for(args[0])}
    return {
        "type": "array",
        "prefixItems": [schema_for(a) for a in args],
        "minItems": len(args),
        "maxItems": len(args),
    }


def _typeddict_schema(cls: type) -> JSONSchema:
    hints = typing.get_type_hints(cls, include_extras=True)
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset(hints))
    properties = {key: schema_for(value) for key, value in hints.items()}
    schema: JSONSchema = {"type": "object", "title": cls.__name__, "properties": properties}
    required = [key for key in hints if key in required_keys]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _dataclass_schema(cls: type) -> JSONSchema:
    hints = typing.get_type_hints(cls, include_extras=True)
    properties: dict[str, JSONSchema] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        schema = schema_for(hints.get(f.name, Any))
        if f.default is not dataclasses.MISSING:
            default = _json_default(f.default)
            if default is not _NO_DEFAULT:
                schema = {**schema, "default": default}
        elif f.default_factory is dataclasses.MISSING:
            required.append(f.name)
        properties[f.name] = schema
    result: JSONSchema = {"type": "object", "title": cls.__name__, "properties": properties}
    if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):
        result["description"] = inspect.cleandoc(cls.__doc__)
    if required:
        result["required"] = required
    result["additionalProperties"] = False
    return result


def _pydantic_schema(model: Any) -> JSONSchema:
    """A pydantic model's own schema, with its ``$defs`` kept local to the property."""
    schema: JSONSchema = model.model_json_schema(mode=_PYDANTIC_MODE.get())
    if "$defs" in schema:
        # References point at #/$defs/...; inline the definitions where they are used
        # so that the property schema stands on its own inside the tool's inputSchema.
        schema = _inline_refs(schema, schema.pop("$defs"))
    return schema


def _inline_refs(node: Any, defs: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref[len("#/$defs/") :]
            if key in seen:
                raise TypeError(f"recursive model {key!r} cannot be used as a tool argument")
            target = _inline_refs(defs[key], defs, (*seen, key))
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**target, **_inline_refs(rest, defs, seen)}
        return {k: _inline_refs(v, defs, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_refs(v, defs, seen) for v in node]
    return node


def converter_for(annotation: Any) -> Converter | None:
    """How to turn validated JSON into the annotated Python value, or None for as-is."""
    annotation = strip_annotated(annotation)[0]
    if annotation is Any or (annotation in _SIMPLE and annotation is not bytes):
        return None
    origin = get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return _dataclass_converter(annotation)
    if _pydantic_model(annotation):
        validate: Converter = annotation.model_validate
        return validate
    if _is_union(origin):
        return _union_converter(get_args(annotation))
    if origin in (list, Sequence, typing.Sequence):
        args = get_args(annotation)
        item = converter_for(args[0]) if args else None
        if item is None:
            return None
        return lambda value: [item(v) for v in value]
    if origin in (set, frozenset) or annotation in (set, frozenset):
        args = get_args(annotation)
        element = converter_for(args[0]) if args else None
        kind = frozenset if (origin or annotation) is frozenset else set
        if element is None:
            return kind
        return lambda value: kind(element(v) for v in value)
    if origin is tuple or annotation is tuple:
        return _tuple_converter(get_args(annotation))
    if origin in (dict, Mapping):
        args = get_args(annotation)
        inner = converter_for(args[1]) if len(args) == 2 else None
        return None if inner is None else (lambda value: {k: inner(v) for k, v in value.items()})
    return None


def _dataclass_converter(cls: type) -> Converter:
    hints = typing.get_type_hints(cls, include_extras=True)
    inner = {
        f.name: converter_for(hints.get(f.name, Any)) for f in dataclasses.fields(cls) if f.init
    }
    active = {name: c for name, c in inner.items() if c is not None}

    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        kwargs = dict(value)
        for name, c in active.items():
            if name in kwargs:
                kwargs[name] = c(kwargs[name])
        return cls(**kwargs)

    return convert


def _union_converter(members: tuple[Any, ...]) -> Converter | None:
    candidates = [(m, converter_for(m)) for m in members if m is not _NONE_TYPE and m is not None]
    active = [(m, c) for m, c in candidates if c is not None]
    if not active:
        return None
    if len(active) == 1 and len(candidates) == 1:
        only = active[0][1]
        return lambda value: None if value is None else only(value)

    def convert(value: Any) -> Any:
        if value is None:
            return None
        for _, c in active:
            try:
                return c(value)
            except (TypeError, ValueError):
                continue
        return value

    return convert


def _tuple_converter(args: tuple[Any, ...]) -> Converter:
    if len(args) == 2 and args[1] is Ellipsis:
        inner = converter_for(args[0])
        return lambda value: tuple(inner(v) for v in value) if inner else tuple(value)
    inners = [converter_for(a) for a in args]
    return lambda value: tuple(c(v) if c else v for c, v in zip(inners, value, strict=False))


def to_json(value: Any) -> Any:
    """Plain JSON data for a return value: dataclasses, models, Enums, tuples, sets."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    raise TypeError(f"cannot convert {type(value).__name__} to JSON")
