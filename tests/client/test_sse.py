"""The SSE decoder the HTTP client transports read with (WHATWG event-stream
interpretation): incremental, line-ending agnostic, bounded."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import TransportError
from mcpkit.transports.http_client import SseEvent, SseParser

STREAM = (
    b": comment\r\n"
    b"id: 1\r\nretry: 500\r\ndata: \r\n\r\n"
    b'event: message\ndata: {"a":\n'
    b"data: 1}\nid: 2\n\n"
    b"data: cr\r\r"
    b"event: endpoint\ndata: /messages?s=1\n\n"
)
EXPECTED = [
    SseEvent(data="", event="message", id="1", retry=500),
    SseEvent(data='{"a":\n1}', event="message", id="2"),
    SseEvent(data="cr"),
    SseEvent(data="/messages?s=1", event="endpoint"),
]


def test_events_are_parsed_with_every_line_ending() -> None:
    parser = SseParser()
    assert parser.feed(STREAM) == EXPECTED
    assert parser.last_event_id == "2"
    assert parser.retry_ms == 500


@given(st.lists(st.integers(min_value=1, max_value=len(STREAM)), max_size=12))
def test_chunk_boundaries_do_not_change_the_events(cuts: list[int]) -> None:
    parser = SseParser()
    events: list[SseEvent] = []
    start = 0
    for cut in sorted(set(cuts)):
        events += parser.feed(STREAM[start:cut])
        start = cut
    events += parser.feed(STREAM[start:])
    assert events == EXPECTED


def test_a_line_longer_than_the_limit_is_refused() -> None:
    parser = SseParser(max_line=64)
    with pytest.raises(TransportError):
        parser.feed(b"data: " + b"x" * 100)
