"""A tool's inputSchema comes from its signature, for every supported annotation kind
(spec ``server/tools.mdx`` §Tool, ``basic/index.mdx`` §JSON Schema Usage)."""

from __future__ import annotations

import dataclasses
import enum
import typing
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest

from mcpkit import Context, Server
from mcpkit.server.signature import inspect_function, output_schema_for, schema_for

# typing.Optional spelled out (not ``int | None``): it is a different object at run time.
OPTIONAL_INT = vars(typing)["Optional"][int]


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(TypedDict):
    x: int
    y: int


class Partial(TypedDict, total=False):
    label: str


@dataclasses.dataclass
class Address:
    """A postal address."""

    street: str
    city: str = "Paris"


class Model(pydantic.BaseModel):
    name: str
    size: int = pydantic.Field(default=1, description="How big")


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (str, {"type": "string"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list, {"type": "array"}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (dict, {"type": "object"}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (OPTIONAL_INT, {"type": ["integer", "null"]}),
        (int | str, {"type": ["integer", "string"]}),
        (
            list[int] | None,
            {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]},
        ),
        (Literal["c", "f"], {"type": "string", "enum": ["c", "f"]}),
        (Literal[1, "a"], {"enum": [1, "a"]}),
        (Color, {"title": "Color", "type": "string", "enum": ["red", "green"]}),
        (Annotated[int, "How many"], {"type": "integer", "description": "How many"}),
        (
            Annotated[int, pydantic.Field(description="From a Field")],
            {"type": "integer", "description": "From a Field"},
        ),
    ],
)
def test_each_annotation_kind_has_its_json_schema(annotation: Any, schema: Any) -> None:
    assert schema_for(annotation) == schema


def test_a_typeddict_becomes_a_closed_object_with_its_required_keys() -> None:
    assert schema_for(Point) == {
        "type": "object",
        "title": "Point",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
        "additionalProperties": False,
    }
    assert "required" not in schema_for(Partial)


def test_a_dataclass_becomes_an_object_with_defaults_and_its_docstring() -> None:
    assert schema_for(Address) == {
        "type": "object",
        "title": "Address",
        "properties": {
            "street": {"type": "string"},
            "city": {"type": "string", "default": "Paris"},
        },
        "description": "A postal address.",
        "required": ["street"],
        "additionalProperties": False,
    }


def test_a_pydantic_model_keeps_its_own_schema() -> None:
    schema = schema_for(Model)
    assert schema["properties"]["name"]["type"] == "string"
    assert schema["properties"]["size"]["description"] == "How big"
    assert schema["required"] == ["name"]


def test_unsupported_annotations_are_refused_at_registration() -> None:
    server = Server("s")

    def takes_bytes_iterator(value: complex) -> str:
        return ""

    with pytest.raises(TypeError, match="cannot derive a JSON Schema"):
        server.add_tool(takes_bytes_iterator)


def test_signature_gives_required_defaults_descriptions_and_closes_the_object() -> None:
    def forecast(location: str, ctx: Context, days: int = 1, units: Literal["c", "f"] = "c") -> str:
        """A made-up forecast.

        Args:
            location: A city name.
            days: How many days ahead.
        """
        return ""

    info = inspect_function(forecast)
    assert info.description == "A made-up forecast."
    assert info.context_param == "ctx"
    assert info.input_schema == {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "A city name."},
            "days": {"type": "integer", "description": "How many days ahead.", "default": 1},
            "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
        },
        "required": ["location"],
        "additionalProperties": False,
    }


def test_keyword_catch_all_opens_the_object() -> None:
    def anything(**rest: Any) -> str:
        return ""

    assert "additionalProperties" not in inspect_function(anything).input_schema


def test_positional_only_parameters_are_refused() -> None:
    def positional(a: int, /) -> int:
        return a

    with pytest.raises(TypeError, match="positional-only"):
        inspect_function(positional)


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, None),
        (int, None),
        (None, None),
        (Any, None),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (Point, schema_for(Point)),
        (Address, schema_for(Address)),
        (list[Point], {"type": "array", "items": schema_for(Point)}),
        (dict[str, int] | None, None),
    ],
)
def test_output_schema_comes_only_from_structured_return_annotations(
    annotation: Any, expected: Any
) -> None:
    assert output_schema_for(annotation) == expected


def test_a_pydantic_return_uses_the_serialization_schema() -> None:
    class Out(pydantic.BaseModel):
        value: int

        @pydantic.computed_field
        @property
        def doubled(self) -> int:
            return self.value * 2

    schema = output_schema_for(Out)
    assert schema is not None
    assert "doubled" in schema["properties"]
