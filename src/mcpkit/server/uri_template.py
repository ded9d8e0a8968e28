"""RFC 6570 URI templates, matched against concrete URIs for resource templates
(spec ``server/resources.mdx`` §Resource Templates).

Matching is linear and builds no regular expression from a template (``security.md``
S-15): literals are compared with ``startswith``/``find``, each expression's characters
are checked against the set its operator allows, and values are percent-decoded as
strict UTF-8.

Supported: the simple (``{id}``), reserved (``{+path}``), label (``{.ext}``), path
segment (``{/seg}``), path parameter (``{;p}``), query (``{?q,lang}``), query
continuation (``{&page}``) and fragment (``{#f}``) operators, several variables per
expression and prefix modifiers (``{id:8}``). Explode modifiers (``*``) are refused.
To keep matching unambiguous, two path-position expressions must be separated by a
literal (``/{a}/{b}``, ``{name}.{ext}``), query expressions come last (before a fragment),
and a fragment expression is the very end.

Values must not escape the shape the template gives them:

* a path-position value (``{id}``, ``{.x}``, ``{/x}``, ``{;x}``) is one segment: once
  decoded it must not contain ``/`` or ``\\``, be ``.`` or ``..``, or be empty;
* a reserved value (``{+path}``) may span segments, but none of them may be ``.`` or
  ``..``, it may not start with ``/`` or contain ``//`` or ``\\``;
* no decoded value may contain NUL, and path values may not contain ``%`` (a value that
  was percent-encoded twice would decode again further down the line).

Query values (``?``/``&``) are data and may hold any character once decoded.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

__all__ = ["UriTemplate"]

_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_RESERVED = frozenset(":/?#[]@!$&'()*+,;=")
_QUERY_VALUE = _UNRESERVED | frozenset("!$'()*+,;:@/?%")
_HEX = frozenset(string.hexdigits)
_VARNAME_FIRST = frozenset(string.ascii_letters + "_")
_VARNAME = _VARNAME_FIRST | frozenset(string.digits)


@dataclass(frozen=True, slots=True)
class _Operator:
    first: str
    sep: str
    named: bool
    reserved: bool
    kind: str  # "segment", "path", "query" or "fragment"


_OPERATORS: dict[str, _Operator] = {
    "": _Operator("", ",", False, False, "segment"),
    "+": _Operator("", ",", False, True, "path"),
    "#": _Operator("#", ",", False, True, "fragment"),
    ".": _Operator(".", ".", False, False, "segment"),
    "/": _Operator("/", "/", False, False, "segment"),
    ";": _Operator(";", ";", True, False, "segment"),
    "?": _Operator("?", "&", True, False, "query"),
    "&": _Operator("&", "&", True, False, "query"),
}


class _Expression:
    """One ``{...}`` of a template (or several query expressions merged into one)."""

    __slots__ = ("allowed", "first", "limits", "names", "op")

    def __init__(self, op: _Operator, names: tuple[str, ...], limits: dict[str, int]) -> None:
        self.op = op
        self.first = op.first
        self.names = names
        self.limits = limits
        allowed = set(_UNRESERVED | {"%"})
        if op.reserved:
            allowed |= _RESERVED
        if op.named:
            allowed |= {op.sep, "="}
        elif len(names) > 1:
            allowed.add(op.sep)
        if op.kind == "query":
            allowed = set(_QUERY_VALUE | {"&", "="})
        self.allowed = frozenset(allowed)

    def bind(self, region: str, values: dict[str, str]) -> bool:
        """Read this expression's variables from ``region`` into ``values``."""
        if self.first:
            if not region:
                return True
            if region[0] != self.first:
                return False
            region = region[1:]
        allowed = self.allowed
        if any(c not in allowed for c in region):
            return False
        if self.op.named:
            return self._bind_named(region, values)
        items = region.split(self.op.sep) if len(self.names) > 1 else [region]
        if len(items) > len(self.names):
            return False
        for name, raw in zip(self.names, items, strict=False):
            if not self._assign(name, raw, values):
                return False
        return True

    def _bind_named(self, region: str, values: dict[str, str]) -> bool:
        if not region:
            return True
        for pair in region.split(self.op.sep):
            name, _, raw = pair.partition("=")
            if name not in self.names or name in values:
                return False
            if not self._assign(name, raw, values):
                return False
        return True

    def _assign(self, name: str, raw: str, values: dict[str, str]) -> bool:
        value = _decode(raw)
        if value is None or not _safe(value, self.op.kind):
            return False
        limit = self.limits.get(name)
        if limit is not None and len(value) > limit:
            return False
        values[name] = value
        return True


def _decode(raw: str) -> str | None:
    """Percent-decode as strict UTF-8; None for a malformed escape or invalid UTF-8."""
    index = raw.find("%")
    if index < 0:
        return raw
    while index >= 0:
        if raw[index + 1 : index + 2] not in _HEX or raw[index + 2 : index + 3] not in _HEX:
            return None
        if index + 3 > len(raw):
            return None
        index = raw.find("%", index + 3)
    try:
        return unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _safe(value: str, kind: str) -> bool:
    if "\x00" in value:
        return False
    if kind == "segment":
        return bool(value) and value not in (".", "..") and not any(c in value for c in "/\\%")
    if kind == "path":
        if not value or value.startswith("/") or "\\" in value or "%" in value:
            return False
        segments = value.split("/")
        if any(segment in (".", "..") for segment in segments):
            return False
        return all(segments[:-1])
    return True


class UriTemplate:
    """A parsed URI template that matches URIs and names its variables."""

    __slots__ = ("_parts", "optional", "template", "variables")

    def __init__(self, template: str) -> None:
        if not isinstance(template, str) or not template:
            raise ValueError("a URI template must be a non-empty string")
        self.template = template
        self._parts = _parse(template)
        variables: list[str] = []
        optional: set[str] = set()
        for part in self._parts:
            if isinstance(part, _Expression):
                variables.extend(part.names)
                if part.op.kind in ("query", "fragment") or part.first:
                    optional.update(part.names)
        self.variables: tuple[str, ...] = tuple(variables)
        self.optional: frozenset[str] = frozenset(optional)

    @property
    def is_template(self) -> bool:
        return bool(self.variables)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values when ``uri`` fits the template, else None."""
        parts = self._parts
        values: dict[str, str] = {}
        pos = 0
        for index, part in enumerate(parts):
            if isinstance(part, str):
                if not uri.startswith(part, pos):
                    return None
                pos += len(part)
                continue
            end = self._end(uri, pos, index)
            if end is None or end < pos or not part.bind(uri[pos:end], values):
                return None
            pos = end
        return values if pos == len(uri) else None

    def _end(self, uri: str, pos: int, index: int) -> int | None:
        """Where the region of the expression at ``index`` ends."""
        parts = self._parts
        if index + 1 == len(parts):
            return len(uri)
        following = parts[index + 1]
        if isinstance(following, str):
            if index + 2 == len(parts):
                return len(uri) - len(following) if uri.endswith(following) else None
            found = uri.find(following, pos)
            return found if found >= 0 else None
        found = uri.find(following.first, pos)
        return found if found >= 0 else self._end(uri, pos, index + 1)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"


def _parse(template: str) -> list[str | _Expression]:
    parts: list[str | _Expression] = []
    seen: set[str] = set()
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        close = template.find("}", pos)
        if start < 0:
            if close >= 0:
                raise ValueError(f"unbalanced '}}' in URI template {template!r}")
            parts.append(template[pos:])
            break
        if 0 <= close < start:
            raise ValueError(f"unbalanced '}}' in URI template {template!r}")
        if start > pos:
            parts.append(template[pos:start])
        end = template.find("}", start)
        if end < 0 or "{" in template[start + 1 : end]:
            raise ValueError(f"unbalanced '{{' in URI template {template!r}")
        expression = _expression(template[start + 1 : end], template)
        for name in expression.names:
            if name in seen:
                raise ValueError(f"variable {name!r} appears twice in URI template {template!r}")
            seen.add(name)
        parts.append(expression)
        pos = end + 1
    return _merge_queries(parts, template)


def _expression(body: str, template: str) -> _Expression:
    op_char = body[:1] if body[:1] and body[:1] in _OPERATORS else ""
    if body[:1] and body[:1] in "=,!@|":
        raise ValueError(f"reserved operator in {{{body}}} of URI template {template!r}")
    op = _OPERATORS[op_char]
    names: list[str] = []
    limits: dict[str, int] = {}
    for spec in body[len(op_char) :].split(","):
        if spec.endswith("*"):
            raise ValueError(f"explode modifiers are not supported ({{{body}}} in {template!r})")
        name, colon, limit = spec.partition(":")
        if not name or name[0] not in _VARNAME_FIRST or any(c not in _VARNAME for c in name):
            raise ValueError(
                f"variable {name!r} in URI template {template!r} must be a Python identifier"
            )
        if colon:
            if not limit.isdigit() or not 0 < int(limit) < 10000:
                raise ValueError(f"bad prefix length in {{{body}}} of URI template {template!r}")
            limits[name] = int(limit)
        names.append(name)
    if op.reserved and len(names) > 1:
        raise ValueError(f"{{{body}}} in {template!r}: reserved expressions take one variable")
    return _Expression(op, tuple(names), limits)


def _merge_queries(parts: list[str | _Expression], template: str) -> list[str | _Expression]:
    """Merge trailing query expressions into one and check the template's shape."""
    merged: list[str | _Expression] = []
    for part in parts:
        previous = merged[-1] if merged else None
        if isinstance(previous, _Expression) and previous.op.kind == "fragment":
            raise ValueError(f"a fragment expression must end URI template {template!r}")
        if isinstance(previous, _Expression) and previous.op.kind == "query":
            if isinstance(part, str):
                raise ValueError(f"query expressions must come last in URI template {template!r}")
            if part.op.kind == "query":
                limits = {**previous.limits, **part.limits}
                merged[-1] = _Expression(previous.op, previous.names + part.names, limits)
                continue
        if (
            isinstance(previous, _Expression)
            and isinstance(part, _Expression)
            and part.op.kind not in ("query", "fragment")
        ):
            raise ValueError(
                f"separate the variables of URI template {template!r} with a literal "
                "(for example '/{a}/{b}')"
            )
        merged.append(part)
    return merged
