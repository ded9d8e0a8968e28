"""Argument completion (spec ``server/utilities/completion.mdx``).

``@server.completion(prompt="code_review", argument="language")`` (or
``template="file:///{+path}"``) registers a function that suggests values for one
argument. It receives the partial ``value`` and, when it declares a second parameter,
the ``arguments`` already resolved (``context.arguments``); it may also take a
:class:`~mcpkit.Context`. It returns a list of strings (all matches; the server sends
the first 100 with ``total`` and ``hasMore``) or a :class:`Completion` for full control.

A prompt argument typed as a ``Literal`` or string ``Enum`` completes by itself from its
allowed values. An argument with nothing to suggest gets an empty list. An unknown
prompt, template or argument is -32602.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.errors import InvalidParams
from mcpkit.server.signature import UserFunction

MAX_VALUES = 100

__all__ = [
    "MAX_VALUES",
    "Completer",
    "Completion",
    "CompletionRef",
    "choices_completion",
    "completion_result",
]


@dataclass(frozen=True, slots=True)
class Completion:
    """Suggested values, optionally with the total number of matches and a more flag."""

    values: Sequence[str]
    total: int | None = None
    has_more: bool | None = None


@dataclass(frozen=True, slots=True)
class CompletionRef:
    """What is being completed: ``("ref/prompt", name)`` or ``("ref/resource", template)``."""

    kind: str
    target: str
    argument: str
    value: str
    context: dict[str, str]

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> CompletionRef:
        ref = params.get("ref")
        if type(ref) is not dict:
            raise InvalidParams("completion/complete needs a ref object")
        kind = ref.get("type")
        if kind == "ref/prompt":
            target = ref.get("name")
        elif kind == "ref/resource":
            target = ref.get("uri")
        else:
            raise InvalidParams('ref.type must be "ref/prompt" or "ref/resource"')
        if type(target) is not str:
            raise InvalidParams("ref needs a string name (prompts) or uri (resources)")
        argument = params.get("argument")
        if (
            type(argument) is not dict
            or type(argument.get("name")) is not str
            or type(argument.get("value")) is not str
        ):
            raise InvalidParams(
                "completion/complete needs argument.name and argument.value strings"
            )
        context: dict[str, str] = {}
        raw_context = params.get("context")
        if raw_context is not None:
            if type(raw_context) is not dict:
                raise InvalidParams("context must be an object")
            resolved = raw_context.get("arguments")
            if resolved is not None:
                if type(resolved) is not dict or any(type(v) is not str for v in resolved.values()):
                    raise InvalidParams("context.arguments must map names to strings")
                context = resolved
        return cls(kind, target, argument["name"], argument["value"], context)


class Completer(UserFunction):
    """A registered completion function."""

    __slots__ = ("wants_arguments",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__(fn)
        positional = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.name != self.context_param
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
        if not 1 <= len(positional) <= 2:
            raise TypeError(
                "a completion function takes the partial value and, optionally, the "
                "resolved arguments (plus an optional Context)"
            )
        self.wants_arguments = len(positional) == 2

    async def complete(self, value: str, arguments: dict[str, str], context: Any) -> Any:
        args = (value, arguments) if self.wants_arguments else (value,)
        return await self.call({}, context, *args)


def choices_completion(choices: Sequence[str], value: str) -> list[str]:
    """The allowed values that start with ``value`` (case-insensitive)."""
    folded = value.casefold()
    return [choice for choice in choices if choice.casefold().startswith(folded)]


def completion_result(found: Any) -> dict[str, Any]:
    """The ``CompleteResult`` (without ``resultType``) for what a completer returned."""
    if isinstance(found, Completion):
        values = list(found.values)
        total, has_more = found.total, found.has_more
    elif isinstance(found, list | tuple):
        values = list(found)
        total, has_more = len(values), len(values) > MAX_VALUES
    else:
        raise TypeError(
            f"a completion function must return a list of strings or a Completion, "
            f"not {type(found).__name__}"
        )
    if any(not isinstance(v, str) for v in values):
        raise TypeError("completion values must be strings")
    if len(values) > MAX_VALUES:
        values = values[:MAX_VALUES]
        has_more = True
    completion: dict[str, Any] = {"values": values}
    if total is not None:
        completion["total"] = total
    if has_more is not None:
        completion["hasMore"] = has_more
    return {"completion": completion}
