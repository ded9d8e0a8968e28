"""Prompts (spec ``server/prompts.mdx``).

``@server.prompt`` registers a function whose parameters are the prompt's arguments:
prompt arguments are strings on the wire, so each parameter is ``str``, ``str | None``, a
``Literal`` of strings or a string ``Enum`` (whose values also become completion
suggestions). A parameter without a default is a required argument; its description
comes from ``Annotated[str, "..."]`` or the docstring's ``Args:`` section, and the
prompt's description from the docstring. A :class:`~mcpkit.Context` parameter is
passed the request context.

The function returns the messages: a string (one user text message), a content block
(one user message), a :class:`~mcpkit.types.content.PromptMessage`, a ``{"role",
"content"}`` dict, or a list of those. An unknown prompt, a missing required argument, an
unknown argument or a value that is not a string (or not one of a ``Literal``'s values)
is -32602 (§Error Handling).
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin

from mcpkit.errors import InvalidParams
from mcpkit.server.registry import check_icons
from mcpkit.server.signature import (
    UserFunction,
    parse_docstring,
    strip_annotated,
    unwrap_optional,
)
from mcpkit.types.content import Content, PromptMessage

__all__ = ["Prompt", "PromptArgument", "message_wire", "messages_for"]


class PromptArgument:
    """One argument of a prompt, read from a parameter."""

    __slots__ = ("choices", "convert", "description", "name", "required")

    def __init__(
        self,
        name: str,
        description: str | None,
        required: bool,
        choices: tuple[str, ...] | None,
        convert: Callable[[str], Any] | None,
    ) -> None:
        self.name = name
        self.description = description
        self.required = required
        self.choices = choices
        self.convert = convert

    @property
    def wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"name": self.name}
        if self.description:
            wire["description"] = self.description
        wire["required"] = self.required
        return wire


class Prompt(UserFunction):
    """One registered prompt."""

    __slots__ = (
        "_wire",
        "arguments",
        "description",
        "icons",
        "meta",
        "name",
        "required_capabilities",
        "title",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        requires: dict[str, Any] | None = None,
    ) -> None:
        doc, arg_docs = parse_docstring(inspect.getdoc(fn))
        self.name: str = name or str(getattr(fn, "__name__", ""))
        if not self.name:
            raise ValueError("a prompt needs a name")
        self.title = title
        self.description = description if description is not None else doc
        self.icons = check_icons(icons)
        self.meta = meta
        self.required_capabilities = requires or {}
        super().__init__(fn)
        self.arguments = _arguments(fn, self.name, self.context_param, arg_docs)
        self._wire = self._build_wire()

    def _build_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            wire["title"] = self.title
        if self.description:
            wire["description"] = self.description
        if self.arguments:
            wire["arguments"] = [argument.wire for argument in self.arguments.values()]
        if self.icons:
            wire["icons"] = self.icons
        if self.meta:
            wire["_meta"] = self.meta
        return wire

    @property
    def wire(self) -> dict[str, Any]:
        """The ``Prompt`` object for ``prompts/list``."""
        return self._wire

    def bind(self, arguments: Any) -> dict[str, Any]:
        """Keyword arguments for the function; -32602 naming every problem."""
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise InvalidParams("prompts/get arguments must be an object")
        problems: list[str] = []
        missing = [
            name for name, arg in self.arguments.items() if arg.required and name not in arguments
        ]
        if missing:
            problems.append(f"missing required argument(s): {', '.join(missing)}")
        kwargs: dict[str, Any] = {}
        for name, value in arguments.items():
            argument = self.arguments.get(name)
            if argument is None:
                problems.append(f"unknown argument {name!r}")
            elif type(value) is not str:
                problems.append(f"argument {name!r} must be a string")
            elif argument.choices is not None and value not in argument.choices:
                problems.append(f"argument {name!r} must be one of {list(argument.choices)}")
            else:
                kwargs[name] = argument.convert(value) if argument.convert else value
        if problems:
            raise InvalidParams(
                f"Invalid arguments for prompt '{self.name}': {'; '.join(problems)}"
            )
        return kwargs

    async def render(self, kwargs: dict[str, Any], context: Any) -> dict[str, Any]:
        """The ``GetPromptResult`` (without ``resultType``) for bound arguments."""
        value = await self.call(kwargs, context)
        result: dict[str, Any] = {}
        if self.description:
            result["description"] = self.description
        result["messages"] = messages_for(value, self.name)
        return result


def _arguments(
    fn: Callable[..., Any], prompt: str, context_param: str | None, docs: dict[str, str]
) -> dict[str, PromptArgument]:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError) as exc:
        raise TypeError(f"prompt {prompt!r}: cannot read the type hints: {exc}") from exc
    arguments: dict[str, PromptArgument] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.name == context_param or param.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"prompt {prompt!r}: positional-only parameter {param.name!r}")
        annotation, description, _ = strip_annotated(hints.get(param.name, str))
        choices, convert = _string_kind(annotation, prompt, param.name)
        arguments[param.name] = PromptArgument(
            param.name,
            description or docs.get(param.name),
            param.default is inspect.Parameter.empty,
            choices,
            convert,
        )
    return arguments


def _string_kind(
    annotation: Any, prompt: str, name: str
) -> tuple[tuple[str, ...] | None, Callable[[str], Any] | None]:
    """(allowed values, converter) for a prompt parameter's annotation."""
    annotation = unwrap_optional(annotation)
    if annotation is str or annotation is Any:
        return None, None
    if get_origin(annotation) is Literal and all(isinstance(v, str) for v in get_args(annotation)):
        return tuple(get_args(annotation)), None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [member.value for member in annotation]
        if all(isinstance(v, str) for v in values):
            return tuple(values), annotation
    raise TypeError(
        f"prompt {prompt!r}: argument {name!r} must be a string (str, str | None, a Literal "
        f"of strings or a string Enum), not {annotation!r}"
    )


def message_wire(item: Any) -> dict[str, Any] | None:
    """The ``{"role", "content"}`` message for a string or a content block (a user
    message) or a :class:`PromptMessage`; None for anything else (a dict is the caller's
    to check). Prompt results and sampling requests share this shape."""
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, PromptMessage):
        return item.wire
    if isinstance(item, Content):
        return {"role": "user", "content": item.wire}
    return None


def messages_for(value: Any, prompt: str) -> list[dict[str, Any]]:
    """The ``messages`` array for what a prompt function returned."""
    items = value if isinstance(value, list | tuple) else [value]
    messages: list[dict[str, Any]] = []
    for item in items:
        wire = message_wire(item)
        if wire is None:
            if not (
                isinstance(item, dict)
                and item.get("role") in ("user", "assistant")
                and isinstance(item.get("content"), dict)
            ):
                raise TypeError(
                    f"prompt {prompt!r} returned {type(item).__name__}; expected str, a "
                    "content block, a PromptMessage or a list of them"
                )
            wire = item
        messages.append(wire)
    return messages
