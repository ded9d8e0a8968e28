"""Compiled JSON Schema (spec ``basic/index.mdx`` §JSON Schema Usage; ``security.md`` §0.1,
§0.2, S-13, S-14, S-15; design §3.5 for the order of problems)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.request import urlopen

import pytest

from mcpkit.protocol import schema
from mcpkit.protocol.schema import SchemaError, compile_schema

FORECAST: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {"type": "string"},
        "days": {"type": "integer"},
        "units": {"enum": ["c", "f"]},
    },
    "required": ["location"],
    "additionalProperties": False,
}

# -- the order of problems -------------------------------------------------------------------


def test_the_seed_example_reports_exactly_four_problems_in_reading_order() -> None:
    problems = compile_schema(FORECAST).problems({"days": 2.5, "units": "k", "x": 1})
    assert len(problems) == 4, problems
    missing, days, units, unexpected = problems
    assert missing == 'missing required property "location"'
    assert days.startswith("days: ")
    assert "integer" in days
    assert units.startswith("units: ")
    assert '"c"' in units
    assert '"f"' in units
    assert unexpected == 'unexpected property "x"'


def test_missing_properties_follow_the_order_of_required() -> None:
    compiled = compile_schema(
        {"type": "object", "required": ["zeta", "alpha", "mid"], "properties": {}}
    )
    assert compiled.problems({}) == [
        'missing required property "zeta"',
        'missing required property "alpha"',
        'missing required property "mid"',
    ]


def test_property_problems_follow_the_schema_order_not_the_instance_order() -> None:
    compiled = compile_schema(
        {
            "type": "object",
            "properties": {
                "first": {"type": "string"},
                "second": {"type": "integer", "minimum": 10},
                "third": {"type": "boolean"},
            },
        }
    )
    problems = compiled.problems({"third": 1, "second": 2.5, "first": 3})
    heads = [problem.split(":")[0] for problem in problems]
    assert heads == ["first", "second", "second", "third"]


def test_problems_deep_inside_a_property_name_their_path() -> None:
    compiled = compile_schema(
        {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "object", "required": ["id"]}}
            },
        }
    )
    assert compiled.problems({"items": [{"id": 1}, {}]}) == [
        'items[1]: "id" is a required property'
    ]


def test_every_unexpected_property_is_listed_last() -> None:
    problems = compile_schema(FORECAST).problems({"location": "Oslo", "b": 1, "a": 2, "days": "x"})
    assert problems[0].startswith("days: ")
    assert sorted(problems[1:]) == ['unexpected property "a"', 'unexpected property "b"']


def test_a_valid_instance_has_no_problems() -> None:
    compiled = compile_schema(FORECAST)
    assert compiled.is_valid({"location": "Oslo", "days": 3})
    assert compiled.problems({"location": "Oslo", "days": 3, "units": "c"}) == []


def test_a_problem_quoting_a_long_value_is_shortened_but_keeps_both_ends() -> None:
    compiled = compile_schema(
        {"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}
    )
    (problem,) = compiled.problems({"s": "b" * 5_000 + "END"})
    assert len(problem) <= schema.MAX_PROBLEM_CHARS + len("s: ")
    assert problem.startswith('s: "bbb')
    assert "longer than 3 characters" in problem


def test_the_list_of_problems_is_capped_and_says_how_many_more() -> None:
    compiled = compile_schema({"type": "array", "items": {"type": "string"}})
    problems = compiled.problems(list(range(500)))
    assert len(problems) == schema.MAX_PROBLEMS
    assert problems[0] == '[0]: 0 is not of type "string"'
    assert problems[-1] == f"... and {500 - schema.MAX_PROBLEMS + 1} more problems"


# -- network $refs are never fetched -----------------------------------------------------------


class _Canary:
    """A loopback HTTP server that counts requests and would serve a valid schema."""

    def __init__(self) -> None:
        self.hits = 0
        canary = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                canary.hits += 1
                body = b'{"type": "string"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/schema+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )


@pytest.fixture
def canary() -> Iterator[_Canary]:
    server = _Canary()
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
        server.thread.join(timeout=5)


def test_the_canary_counts_what_reaches_it(canary: _Canary) -> None:
    with urlopen(canary.url + "/probe.json", timeout=5) as reply:
        assert reply.read() == b'{"type": "string"}'
    assert canary.hits == 1


@pytest.mark.parametrize(
    "shape",
    ["root", "property", "relative-to-id", "dynamic-ref", "defs-chain"],
)
def test_a_network_ref_is_never_fetched_and_the_schema_is_refused(
    canary: _Canary, shape: str
) -> None:
    url = canary.url + "/x.json"
    schemas: dict[str, dict[str, Any]] = {
        "root": {"$ref": url},
        "property": {"type": "object", "properties": {"a": {"$ref": url}}},
        "relative-to-id": {"$id": canary.url + "/base.json", "items": {"$ref": "other.json"}},
        "dynamic-ref": {"$dynamicRef": url + "#node"},
        "defs-chain": {"$defs": {"a": {"$ref": url}}, "$ref": "#/$defs/a"},
    }
    with pytest.raises(SchemaError) as caught:
        compile_schema(schemas[shape])
    assert "disabled" in str(caught.value) or "not present" in str(caught.value)
    assert canary.hits == 0


def test_a_file_ref_is_refused_too() -> None:
    with pytest.raises(SchemaError, match="disabled"):
        compile_schema({"$ref": "file:///etc/passwd"})


def test_local_refs_resolve_and_recursion_terminates() -> None:
    compiled = compile_schema(
        {
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                    },
                }
            },
            "$ref": "#/$defs/node",
        }
    )
    assert compiled.is_valid({"value": 1, "children": [{"value": 2, "children": []}]})
    assert compiled.problems({"children": [{"children": [{"value": "x"}]}]}) == [
        'children[0].children[0].value: "x" is not of type "integer"'
    ]


def test_a_ref_to_a_missing_local_definition_is_refused() -> None:
    with pytest.raises(SchemaError):
        compile_schema({"$ref": "#/$defs/missing"})


# -- dialects -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dialect",
    [
        "http://json-schema.org/draft-03/schema#",
        "https://example.com/my-dialect",
        "http://json-schema.org/schema#",
        "",
    ],
    ids=["draft-03", "custom", "unversioned", "empty"],
)
def test_an_unknown_dialect_is_refused_with_an_error_naming_it(dialect: str) -> None:
    with pytest.raises(SchemaError) as caught:
        compile_schema({"$schema": dialect, "type": "string"})
    message = str(caught.value)
    assert repr(dialect) in message
    assert "unsupported JSON Schema dialect" in message
    assert "2020-12" in message
    assert "draft-07" in message


def test_a_dialect_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(SchemaError, match=r"\$schema"):
        compile_schema({"$schema": 7})


def test_the_spec_draft_07_example_works() -> None:
    compiled = compile_schema(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
            "required": ["name"],
        }
    )
    assert compiled.is_valid({"name": "Ada", "age": 36})
    assert compiled.problems({"age": -1}) == [
        'missing required property "name"',
        "age: -1 is less than the minimum of 0",
    ]


def test_draft_07_keeps_its_own_semantics_and_2020_12_is_the_default() -> None:
    tuple_items = {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}
    draft7 = compile_schema({"$schema": "http://json-schema.org/draft-07/schema#", **tuple_items})
    assert draft7.is_valid([1, "a"])
    assert draft7.problems([1, 2]) == ['[1]: 2 is not of type "string"']
    with pytest.raises(SchemaError):
        compile_schema(tuple_items)


@pytest.mark.parametrize(
    "dialect",
    [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-04/schema#",
    ],
)
def test_the_documented_dialects_are_accepted(dialect: str) -> None:
    compiled = compile_schema({"$schema": dialect, "type": "integer"})
    assert compiled.is_valid(3)
    assert not compiled.is_valid("3")


def test_an_invalid_schema_is_refused_with_the_reason() -> None:
    with pytest.raises(SchemaError, match="bogus"):
        compile_schema({"type": "bogus"})


@pytest.mark.parametrize("value", [[], "string", 3, None], ids=["array", "str", "int", "none"])
def test_a_schema_must_be_an_object(value: Any) -> None:
    with pytest.raises(SchemaError, match="object"):
        compile_schema(value)


def test_a_schema_that_is_not_json_is_refused() -> None:
    with pytest.raises(SchemaError, match="not JSON"):
        compile_schema({"type": "object", "default": object()})


# -- bounds ---------------------------------------------------------------------------------------


def _all_of_chain(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        node = {"allOf": [node]}
    return node


@pytest.mark.parametrize(
    ("made", "reason"),
    [
        (lambda: _all_of_chain(1_000), "nesting"),
        (lambda: {"anyOf": [{"type": "integer"}] * 10_001}, "subschemas"),
        (lambda: {"enum": list(range(1_000_000))}, "larger than"),
        (lambda: {"type": "string", "description": "d" * (1024 * 1024)}, "larger than"),
        (
            lambda: {"properties": {f"p{i}": {"title": "t" * 50} for i in range(5000)}},
            "larger than",
        ),
    ],
    ids=["allOf-1000-deep", "anyOf-10001-branches", "enum-1e6", "1-MiB-string", "wide-260-KiB"],
)
def test_oversized_and_overdeep_schemas_are_refused_quickly(made: Any, reason: str) -> None:
    built = made()
    started = time.perf_counter()
    with pytest.raises(SchemaError, match=reason):
        compile_schema(built)
    assert time.perf_counter() - started < 0.5


def test_a_schema_within_the_bounds_compiles() -> None:
    compile_schema(_all_of_chain(20))
    compile_schema({"anyOf": [{"const": i} for i in range(2_000)]})


# -- the pathological cases of security.md §0.2 ------------------------------------------------


def _fan_out(depth: int) -> dict[str, Any]:
    """About a kilobyte at depth 18: each level's anyOf refers twice to the level below."""
    defs: dict[str, Any] = {"l0": {"type": "integer", "minimum": 10}}
    for level in range(1, depth + 1):
        below = {"$ref": f"#/$defs/l{level - 1}"}
        defs[f"l{level}"] = {"anyOf": [below, dict(below)]}
    return {"$defs": defs, "$ref": f"#/$defs/l{depth}"}


def test_an_exponential_anyof_fan_out_at_depth_18_is_refused_at_compile_time_quickly() -> None:
    fan_out = _fan_out(18)
    started = time.perf_counter()
    with pytest.raises(SchemaError, match="expands"):
        compile_schema(fan_out)
    assert time.perf_counter() - started < 0.5


def test_a_modest_fan_out_compiles_and_its_problems_come_fast() -> None:
    compiled = compile_schema(_fan_out(8))
    started = time.perf_counter()
    assert compiled.is_valid(11)
    problems = compiled.problems(1)
    assert time.perf_counter() - started < 0.5
    assert len(problems) == 1
    assert "anyOf" in problems[0]


@pytest.mark.parametrize("size", [2_000, 8_000])
def test_unique_items_over_thousands_of_objects_is_fast(size: int) -> None:
    compiled = compile_schema({"type": "array", "uniqueItems": True})
    distinct = [{"id": i, "name": f"n{i}"} for i in range(size)]
    started = time.perf_counter()
    assert compiled.problems(distinct) == []
    duplicated = [*distinct, {"id": 0, "name": "n0"}]
    assert len(compiled.problems(duplicated)) == 1
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize("length", [26, 100_000])
def test_a_catastrophic_backtracking_pattern_is_fast(length: int) -> None:
    compiled = compile_schema({"type": "string", "pattern": "^(a+)+$"})
    started = time.perf_counter()
    assert compiled.is_valid("a" * length)
    (problem,) = compiled.problems("a" * length + "!")
    assert time.perf_counter() - started < 0.5
    assert problem.endswith('does not match "^(a+)+$"')


# -- large invalid instances ----------------------------------------------------------------------


def test_a_huge_invalid_argument_is_summarised_quickly_not_itemised() -> None:
    compiled = compile_schema(
        {
            **FORECAST,
            "properties": {
                **FORECAST["properties"],
                "tags": {
                    "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
                },
            },
        }
    )
    instance = {"days": 2.5, "units": "k", "x": 1, "tags": list(range(1_000_000))}
    started = time.perf_counter()
    problems = compiled.problems(instance)
    assert time.perf_counter() - started < 1.0
    assert problems == [
        'missing required property "location"',
        'days: 2.5 is not of type "integer"',
        'units: "k" is not one of "c" or "f"',
        "tags: does not match its schema (too large to list each problem)",
        'unexpected property "x"',
    ]


def test_a_huge_invalid_value_without_properties_gets_one_summary_line() -> None:
    compiled = compile_schema({"type": "array", "items": {"type": "string"}})
    started = time.perf_counter()
    problems = compiled.problems(list(range(1_000_000)))
    assert time.perf_counter() - started < 1.0
    assert problems == ["the value does not match the schema (too large to list each problem)"]


def test_unexpected_properties_of_a_huge_instance_honour_pattern_properties() -> None:
    compiled = compile_schema(
        {
            "type": "object",
            "properties": {"big": {"type": "array", "items": {"type": "integer"}}},
            "patternProperties": {"^x-": {}},
            "additionalProperties": False,
        }
    )
    problems = compiled.problems({"big": list(range(100_000)), "x-ok": 1, "nope": 2})
    assert problems == ['unexpected property "nope"']
