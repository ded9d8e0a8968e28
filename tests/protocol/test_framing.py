"""Newline-delimited framing (spec ``basic/transports/stdio.mdx``; ``security.md`` R-03,
R-07): an incremental reader that never holds more than its line limit."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.errors import INVALID_REQUEST, PARSE_ERROR, InvalidRequest, ParseError, ProtocolError
from mcpkit.protocol import codec, framing
from mcpkit.protocol.framing import DEFAULT_MAX_LINE, LineReader

MiB = 1024 * 1024

# -- the cases, verbatim -----------------------------------------------------------------


def test_a_partial_second_message_is_kept_until_its_newline_arrives() -> None:
    reader = LineReader()
    assert reader.feed(b'{"id":1}\n{"id"') == [{"id": 1}]
    assert reader.buffered == len(b'{"id"')
    assert reader.feed(b':2}\n{"id":3}\n') == [{"id": 2}, {"id": 3}]
    assert reader.buffered == 0


def test_a_line_that_is_not_json_yields_a_parse_error_and_reading_continues() -> None:
    reader = LineReader()
    frames = reader.feed(b'{"id":1}\nthis is not json\n{"id":2}\n')
    assert frames[0] == {"id": 1}
    assert isinstance(frames[1], ParseError)
    assert frames[1].code == PARSE_ERROR
    assert frames[2] == {"id": 2}
    assert len(frames) == 3


def test_the_writer_never_emits_a_raw_newline_inside_a_message() -> None:
    line = framing.encode({"a": "line1\nline2", "id": 1})
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert LineReader().feed(line) == [{"a": "line1\nline2", "id": 1}]


# -- the line limit ----------------------------------------------------------------------------


def test_the_default_line_limit_is_4_mib() -> None:
    assert DEFAULT_MAX_LINE == 4 * 1024 * 1024
    assert LineReader().max_line == DEFAULT_MAX_LINE


def test_a_256_mib_line_without_newline_is_rejected_and_memory_stays_bounded() -> None:
    reader = LineReader()
    chunk = b"a" * MiB
    frames: list[Any] = []
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for _ in range(256):
            frames += reader.feed(chunk)
            assert reader.buffered <= reader.max_line
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    assert peak < 2 * DEFAULT_MAX_LINE, f"peak {peak / MiB:.1f} MiB"
    assert len(frames) == 1
    assert isinstance(frames[0], InvalidRequest)
    assert frames[0].code == INVALID_REQUEST
    assert "limit" in frames[0].message
    assert reader.buffered == 0
    assert reader.feed(b"tail of the long line\n" + framing.encode({"id": 9})) == [{"id": 9}]


@pytest.mark.parametrize("limit", [16, 1024, 64 * 1024])
def test_the_line_limit_is_configurable(limit: int) -> None:
    reader = LineReader(max_line=limit)
    exact = b'"' + b"x" * (limit - 2) + b'"'
    assert reader.feed(exact + b"\n") == ["x" * (limit - 2)]
    frames = reader.feed(b'"' + b"x" * (limit - 1) + b'"\n{"ok":1}\n')
    assert len(frames) == 2
    assert isinstance(frames[0], InvalidRequest)
    assert frames[1] == {"ok": 1}


def test_an_over_limit_line_split_across_feeds_gets_exactly_one_error() -> None:
    reader = LineReader(max_line=100)
    frames: list[Any] = []
    for _ in range(10):
        frames += reader.feed(b"y" * 30)
        assert reader.buffered <= 100
    frames += reader.feed(b"y" * 30 + b'\n{"after":true}\n')
    assert [type(frame) for frame in frames] == [InvalidRequest, dict]
    assert frames[1] == {"after": True}


def test_an_over_limit_line_completed_in_the_next_feed_gets_one_error() -> None:
    reader = LineReader(max_line=100)
    assert reader.feed(b"z" * 90) == []
    frames = reader.feed(b"z" * 20 + b"\n[1]\n")
    assert [type(frame) for frame in frames] == [InvalidRequest, list]


def test_a_tiny_line_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="max_line"):
        LineReader(max_line=1)


def test_the_nesting_limit_applies_per_line() -> None:
    reader = LineReader(max_depth=3)
    frames = reader.feed(b"[[[]]]\n[[[[]]]]\n")
    assert frames[0] == [[[]]]
    assert isinstance(frames[1], InvalidRequest)


# -- line endings, blank lines, end of input --------------------------------------------------


def test_crlf_line_endings_are_accepted() -> None:
    reader = LineReader()
    assert reader.feed(b'{"id":1}\r\n{"id":2}\r') == [{"id": 1}]
    assert reader.feed(b'\n{"id":3}\r\n') == [{"id": 2}, {"id": 3}]


def test_blank_and_whitespace_lines_are_ignored() -> None:
    reader = LineReader()
    assert reader.feed(b'\n\n   \n\t\r\n\r\n{"id":1}\n\n') == [{"id": 1}]


def test_a_final_line_without_newline_is_delivered_at_close() -> None:
    reader = LineReader()
    assert reader.feed(b'{"id":1}\n{"id":2}') == [{"id": 1}]
    assert reader.close() == [{"id": 2}]
    assert reader.buffered == 0
    assert reader.close() == []


def test_a_truncated_final_line_is_a_parse_error_at_close() -> None:
    reader = LineReader()
    reader.feed(b'{"id":')
    frames = reader.close()
    assert len(frames) == 1
    assert isinstance(frames[0], ParseError)


def test_close_after_an_over_limit_line_delivers_nothing_more() -> None:
    reader = LineReader(max_line=10)
    assert len(reader.feed(b"x" * 50)) == 1
    assert reader.close() == []


def test_bytearray_input_is_read_like_bytes() -> None:
    assert LineReader().feed(bytearray(b'{"id":1}\n')) == [{"id": 1}]


# -- properties ----------------------------------------------------------------------------------

_MESSAGES = st.lists(
    st.dictionaries(
        st.text(max_size=6),
        st.one_of(st.integers(), st.text(), st.booleans(), st.none(), st.lists(st.integers())),
        max_size=4,
    ),
    max_size=12,
)


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    pieces = []
    start = 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return pieces


@settings(deadline=None)
@given(_MESSAGES, st.lists(st.integers(min_value=0), max_size=30), st.booleans(), st.booleans())
def test_any_chunking_of_a_stream_yields_exactly_the_messages_sent(
    messages: list[dict[str, Any]], cuts: list[int], crlf: bool, final_newline: bool
) -> None:
    ending = b"\r\n" if crlf else b"\n"
    stream = b"".join(codec.dumps(message) + ending for message in messages)
    if not final_newline and stream:
        stream = stream[: -len(ending)]
    reader = LineReader()
    frames: list[Any] = []
    for piece in _cut(stream, cuts):
        frames += reader.feed(piece)
    frames += reader.close()
    assert frames == messages


@settings(deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=20))
def test_arbitrary_bytes_never_raise_out_of_feed(chunks: list[bytes]) -> None:
    reader = LineReader(max_line=48, max_depth=4)
    frames: list[Any] = []
    for chunk in chunks:
        frames += reader.feed(chunk)
        assert reader.buffered <= 48
    frames += reader.close()
    for frame in frames:
        assert not isinstance(frame, Exception) or isinstance(frame, ProtocolError)
    assert reader.buffered == 0
