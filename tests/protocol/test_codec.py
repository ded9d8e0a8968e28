"""The JSON codec: strict decoding (spec ``basic/index.mdx`` §Messages, ``security.md``
R-01, R-02, R-05, R-06) and single-line encoding."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.errors import INVALID_REQUEST, PARSE_ERROR, InvalidRequest, ParseError, ProtocolError
from mcpkit.protocol import codec

# -- invalid text is a parse error (-32700) ------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        b'{"jsonrpc":"2.0","id":1,',
        b'{"a":1,}',
        b"[1,2,]",
        b"{'a':1}",
        b"",
        b"   ",
        b'{"a":1} {"b":2}',
        b'{"a":1}\x00',
        b"nul",
        b'{"a":01}',
        b'{"a":"tab\there"}',
    ],
    ids=[
        "truncated",
        "trailing-comma-object",
        "trailing-comma-array",
        "single-quotes",
        "empty",
        "whitespace-only",
        "two-documents",
        "trailing-nul",
        "bare-word",
        "leading-zero",
        "raw-control-character-in-string",
    ],
)
def test_text_that_is_not_json_is_a_parse_error(text: bytes) -> None:
    with pytest.raises(ParseError) as caught:
        codec.loads(text)
    assert caught.value.code == PARSE_ERROR
    assert caught.value.message.startswith("Parse error")


@pytest.mark.parametrize(
    "text",
    [b'{"a":NaN}', b'{"a":Infinity}', b'{"a":-Infinity}', b'{"a":1e400}'],
    ids=["NaN", "Infinity", "-Infinity", "overflow-to-infinity"],
)
def test_nan_and_infinity_are_parse_errors(text: bytes) -> None:
    with pytest.raises(ParseError):
        codec.loads(text)


def test_a_byte_order_mark_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        codec.loads(b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}')


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":"\xff"}',
        b'{"a":"\xc0\xaf"}',
        b'{"a":"\xed\xa0\x80"}',
        b'{"a":"\xe2\x82"}',
        b"\xff",
    ],
    ids=["ff-byte", "overlong-slash", "cesu-surrogate", "truncated-multibyte", "lone-ff"],
)
def test_invalid_utf8_is_a_parse_error_never_replaced(text: bytes) -> None:
    with pytest.raises(ParseError) as caught:
        codec.loads(text)
    assert "UTF-8" in caught.value.message


@pytest.mark.parametrize(
    "text",
    [rb'{"a":"\ud800"}', rb'{"a":"\udc00"}', rb'{"a":"x\ud83dy"}', rb'{"\udfff":1}'],
    ids=["high", "low", "high-without-low", "in-a-key"],
)
def test_lone_surrogate_escapes_are_parse_errors(text: bytes) -> None:
    with pytest.raises(ParseError):
        codec.loads(text)


def test_text_holding_a_lone_surrogate_character_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        codec.loads('{"a":"\ud800"}')


def test_a_surrogate_pair_escape_is_one_character() -> None:
    assert codec.loads(rb'{"a":"\ud83d\ude00"}') == {"a": "\U0001f600"}


def test_str_bytearray_and_memoryview_decode_like_bytes() -> None:
    text = '{"a":[1,"é"]}'
    expected = {"a": [1, "é"]}
    assert codec.loads(text) == expected
    assert codec.loads(bytearray(text.encode())) == expected
    assert codec.loads(memoryview(text.encode())) == expected


# -- nesting (-32600) --------------------------------------------------------------------


def _arrays(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _objects(depth: int) -> bytes:
    return b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


@pytest.mark.parametrize("nest", [_arrays, _objects], ids=["arrays", "objects"])
def test_nesting_up_to_the_default_limit_of_128_is_accepted(nest: Any) -> None:
    assert codec.DEFAULT_MAX_DEPTH == 128
    codec.loads(nest(128))


@pytest.mark.parametrize("nest", [_arrays, _objects], ids=["arrays", "objects"])
@pytest.mark.parametrize("depth", [129, 200, 1_000, 1_025, 5_000])
def test_nesting_beyond_the_limit_is_an_invalid_request(nest: Any, depth: int) -> None:
    with pytest.raises(InvalidRequest) as caught:
        codec.loads(nest(depth))
    assert caught.value.code == INVALID_REQUEST
    assert "nesting" in caught.value.message


def test_deep_nesting_inside_arguments_is_refused() -> None:
    inner = _arrays(130).decode()
    message = f'{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"arguments":{inner}}}}}'
    with pytest.raises(InvalidRequest):
        codec.loads(message)


def test_the_nesting_limit_is_configurable() -> None:
    codec.loads(_arrays(4), max_depth=4)
    with pytest.raises(InvalidRequest):
        codec.loads(_arrays(5), max_depth=4)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"a": "[" * 500 + "{" * 500}).encode()
    assert codec.loads(text) == {"a": "[" * 500 + "{" * 500}


@pytest.mark.parametrize(
    "text",
    [_arrays(100_000), b"[" * 100_000, b'{"a":' * 100_000, _objects(100_000)],
    ids=["arrays", "unclosed-arrays", "unclosed-objects", "objects"],
)
def test_depth_100000_is_rejected_quickly(text: bytes) -> None:
    started = time.perf_counter()
    with pytest.raises(ProtocolError) as caught:
        codec.loads(text)
    elapsed = time.perf_counter() - started
    assert elapsed < 0.05, f"took {elapsed * 1000:.1f} ms"
    assert caught.value.code == INVALID_REQUEST


@pytest.mark.parametrize("depth", [191, 200, 348, 1_000])
def test_unclosed_nesting_below_the_parser_limit_is_a_parse_error_with_a_plain_reason(
    depth: int,
) -> None:
    with pytest.raises(ParseError) as caught:
        codec.loads(b"[" * depth)
    assert "allocate" not in caught.value.message


# -- duplicate keys (-32600) --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}',
        b'{"a":1,"a":1}',
        b'{"a":{"b":1,"b":2}}',
        b'{"a":[{"x":0},{"y":1,"y":1}]}',
        b'{"a" :1,"a":2}',
        b'{"a"\t:1, "a"\n:2}',
        b'{"a"\r\n:1,"a" : 2}',
        b'{"k\\"":1,"k\\"":2}',
        b'{"k\\":":1,"k\\":":2}',
        b'{"\\u0061":1,"a":2}',
        b'{"a":{"z":0},"a":{}}',
        b'{"s":"\\":\\":\\":","s":"x"}',
        b'{"":1,"":2}',
    ],
    ids=[
        "method-twice",
        "same-value",
        "nested-object",
        "inside-array",
        "space-before-colon",
        "tab-and-newline-before-colon",
        "crlf-before-colon",
        "escaped-quote-in-key",
        "escaped-quote-colon-in-key",
        "unicode-escape-spelling",
        "duplicate-hides-nested-keys",
        "strings-holding-quote-colon",
        "empty-key",
    ],
)
def test_duplicate_keys_are_an_invalid_request(text: bytes) -> None:
    with pytest.raises(InvalidRequest) as caught:
        codec.loads(text)
    assert caught.value.code == INVALID_REQUEST
    assert "Duplicate key" in caught.value.message


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":"\\":","b":1}',
        b'{"a" : 1, "b" : {"a" : 2}}',
        b'{"a\\"":1,"a":2}',
        b'{"A":1,"a":2}',
        b'{"a":[{"x":1},{"x":2}]}',
        b'{"a":1,"b":{"a":1}}',
    ],
    ids=[
        "quote-colon-in-value",
        "spaced-same-key-at-two-levels",
        "escaped-quote-makes-another-key",
        "case-differs",
        "same-key-in-sibling-objects",
        "same-key-at-two-levels",
    ],
)
def test_keys_that_only_look_alike_are_not_duplicates(text: bytes) -> None:
    assert codec.loads(text) == json.loads(text)


_WS = st.sampled_from(["", " ", "\t", "\n", "\r\n", "  "])
_KEYS = st.one_of(
    st.sampled_from(["a", "b", 'a"', '"', ":", '":', "\\", "é", "", " ", "a b"]),
    st.text(max_size=3),
)
_SCALARS = st.one_of(
    st.sampled_from(["null", "true", "false", "0", "-1.5", "1e3", '"\\":"', '"a\\"b"', '"}"']),
    st.text(max_size=4).map(json.dumps),
)


def _render_key(key: str, ascii_only: bool) -> str:
    return json.dumps(key, ensure_ascii=ascii_only)


def _render_object(members: list[tuple[str, bool, str, str, str]]) -> str:
    body = ",".join(
        f"{_render_key(key, ascii_only)}{before}:{after}{value}"
        for key, ascii_only, before, after, value in members
    )
    return "{" + body + "}"


_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(_KEYS, st.booleans(), _WS, _WS, children), max_size=4).map(
            _render_object
        ),
    ),
    max_leaves=12,
)


def _has_duplicates(text: str) -> bool:
    """The reference answer: the stdlib parser reporting every object's key list."""
    found = False

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal found
        names = [name for name, _ in pairs]
        found = found or len(set(names)) != len(names)
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return found


@settings(deadline=None, max_examples=300)
@given(_DOCUMENTS, _WS, _WS)
def test_the_duplicate_key_check_agrees_exactly_with_a_pairs_hook_reference(
    document: str, before: str, after: str
) -> None:
    text = before + document + after
    if _has_duplicates(text):
        with pytest.raises(InvalidRequest):
            codec.loads(text.encode())
    else:
        assert codec.loads(text.encode()) == json.loads(text)


_JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**64 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=None)
@given(_JSON_VALUES)
def test_any_value_round_trips_through_dumps_and_loads(value: Any) -> None:
    assert codec.loads(codec.dumps(value)) == value


@settings(deadline=None)
@given(_JSON_VALUES)
def test_indented_text_from_other_writers_decodes_to_the_same_value(value: Any) -> None:
    text = json.dumps(value, indent=1, ensure_ascii=True)
    assert codec.loads(text) == value


# -- exact integers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "number",
    [
        123456789012345678901234567890,
        -123456789012345678901234567890,
        2**64,
        -(2**63) - 1,
        10**300,
    ],
    ids=["30-digits", "negative-30-digits", "2**64", "below-int64", "10**300"],
)
def test_integers_beyond_64_bits_decode_exactly_never_as_floats(number: int) -> None:
    decoded = codec.loads(f'{{"n":{number},"f":0.5}}'.encode())
    assert decoded == {"n": number, "f": 0.5}
    assert type(decoded["n"]) is int
    assert codec.loads(str(number)) == number


@pytest.mark.parametrize("number", [2**63 - 1, -(2**63), 2**64 - 1, 1234567890123456789])
def test_integers_within_64_bits_stay_integers(number: int) -> None:
    decoded = codec.loads(f'{{"n":{number}}}'.encode())
    assert decoded == {"n": number}
    assert type(decoded["n"]) is int


def test_a_long_digit_run_inside_a_string_leaves_floats_alone() -> None:
    assert codec.loads(b'{"s":"12345678901234567890","f":1.25}') == {
        "s": "12345678901234567890",
        "f": 1.25,
    }


def test_duplicates_are_still_refused_when_integers_need_the_exact_decoder() -> None:
    with pytest.raises(InvalidRequest):
        codec.loads(b'{"n":123456789012345678901234567890,"n":1}')


def test_an_integer_beyond_the_interpreters_digit_limit_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        codec.loads(b'{"n":' + b"9" * 5000 + b"}")


# -- encoding -------------------------------------------------------------------------------


def test_dumps_is_compact_utf8_on_one_line() -> None:
    encoded = codec.dumps({"a": "line1\nline2\r\u2028", "b": [1, 2], "é": "ü"})
    assert b"\n" not in encoded
    assert b"\r" not in encoded
    assert b" " not in encoded
    assert encoded.decode("utf-8")
    assert json.loads(encoded) == {"a": "line1\nline2\r\u2028", "b": [1, 2], "é": "ü"}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_dumps_never_writes_nan_or_infinity(value: float) -> None:
    encoded = codec.dumps({"x": value})
    assert b"NaN" not in encoded
    assert b"Infinity" not in encoded
    assert json.loads(encoded) == {"x": None}


def test_dumps_writes_big_integers_exactly() -> None:
    number = 123456789012345678901234567890
    assert codec.dumps({"n": number, "s": "é"}) == f'{{"n":{number},"s":"é"}}'.encode()


def test_dumps_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError):
        codec.dumps({"x": object()})
    with pytest.raises(TypeError):
        codec.dumps({"n": 2**70, "x": object()})


def test_dumps_output_is_what_orjson_would_write() -> None:
    value = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "5"}]}}
    assert codec.dumps(value) == orjson.dumps(value)


def test_dumps_indented_is_readable_json_for_people() -> None:
    value = {"a": [1, {"b": "é"}], "n": 2**70, "empty": {}}
    text = codec.dumps_indented(value)
    assert text == json.dumps(value, indent=2, ensure_ascii=False)
    assert json.loads(text) == value
    small = {"a": [1, {"b": "é\n"}], "empty": []}
    assert codec.dumps_indented(small) == json.dumps(small, indent=2, ensure_ascii=False)


def _reordered(value: Any) -> Any:
    """The same value with every object's keys in reverse insertion order."""
    if isinstance(value, dict):
        return {key: _reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(item) for item in value]
    return value


@settings(deadline=None)
@given(_JSON_VALUES)
def test_dumps_canonical_gives_equal_values_equal_bytes(value: Any) -> None:
    encoded = codec.dumps_canonical(value)
    assert encoded == codec.dumps_canonical(_reordered(value))
    assert json.loads(encoded, object_pairs_hook=_sorted_object) == value


def _sorted_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    assert keys == sorted(keys), keys
    return dict(pairs)


def test_dumps_canonical_sorts_keys_at_every_depth_and_keeps_big_integers_exact() -> None:
    value = {"b": [{"z": 1, "a": 2}], "a": {"y": 2**70, "x": "é"}}
    expected = f'{{"a":{{"x":"é","y":{2**70}}},"b":[{{"a":2,"z":1}}]}}'.encode()
    assert codec.dumps_canonical(value) == expected
    with pytest.raises(TypeError):
        codec.dumps_canonical({"x": object()})
