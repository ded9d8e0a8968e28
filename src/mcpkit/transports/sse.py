"""Server-Sent Events, both directions, without I/O (the SSE half of the codec).

:func:`event` encodes one event whose ``data:`` line is a compact single-line JSON
message — the conformance harness and most clients read SSE line by line, so a message
must never span lines. :class:`SseParser` is the incremental decoder a client feeds
with response chunks; it follows the WHATWG rules (comment lines start with ``:``, an
empty line dispatches, ``retry`` sets the reconnection delay, ``id`` the last event id)
and bounds the size of one line.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcpkit.errors import TransportError

__all__ = ["KEEPALIVE", "SseEvent", "SseParser", "event"]

KEEPALIVE = b":\n\n"
DEFAULT_MAX_EVENT = 4 * 1024 * 1024


def event(
    data: bytes,
    *,
    event_id: str | None = None,
    name: str | None = None,
    retry_ms: int | None = None,
) -> bytes:
    """One SSE event carrying ``data`` (which must not contain a newline)."""
    if b"\n" in data or b"\r" in data:
        raise ValueError("SSE data must be a single line")
    parts: list[bytes] = []
    if event_id is not None:
        parts.append(b"id: " + event_id.encode() + b"\n")
    if name is not None:
        parts.append(b"event: " + name.encode() + b"\n")
    if retry_ms is not None:
        parts.append(b"retry: " + str(retry_ms).encode() + b"\n")
    parts.append(b"data: " + data + b"\n\n")
    return b"".join(parts)


@dataclass(slots=True)
class SseEvent:
    """One dispatched event (https://html.spec.whatwg.org/#event-stream-interpretation)."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SseParser:
    """Incremental ``text/event-stream`` decoder: ``feed(bytes)`` -> complete events.

    Lines end with CRLF, LF or CR; a leading BOM is dropped; comment lines (``:``) are
    ignored; ``data`` lines are joined with newlines; an event is dispatched on a blank
    line (also one carrying only an ``id`` or a ``retry``, which a reconnecting client
    needs). A line longer than ``max_line`` bytes is a :class:`TransportError`, so a
    server cannot make the client buffer without bound.
    """

    def __init__(self, max_line: int = DEFAULT_MAX_EVENT) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._has_id = False
        self._first = True
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self._buffer += chunk
        events: list[SseEvent] = []
        while True:
            line = self._next_line()
            if line is None:
                break
            self._line(line, events)
        if len(self._buffer) > self.max_line:
            raise TransportError(f"SSE line exceeds the limit of {self.max_line} bytes")
        return events

    def _next_line(self) -> str | None:
        buffer = self._buffer
        lf = buffer.find(b"\n")
        cr = buffer.find(b"\r")
        if lf == -1 and cr == -1:
            return None
        if cr == -1 or (lf != -1 and lf < cr):
            end, skip = lf, 1
        elif cr + 1 == len(buffer):
            return None  # a CR at the very end may be the first half of CRLF
        else:
            end, skip = cr, (2 if buffer[cr + 1] == 0x0A else 1)
        text = bytes(buffer[:end]).decode("utf-8", "replace")
        del buffer[: end + skip]
        if self._first:
            self._first = False
            text = text.removeprefix("\ufeff")
        return text

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
                self._has_id = True
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
            self.retry_ms = self._retry

    def _dispatch(self, events: list[SseEvent]) -> None:
        if self._has_id:
            self.last_event_id = self._id
        if self._data or self._retry is not None or self._has_id:
            events.append(
                SseEvent(
                    data="\n".join(self._data),
                    event=self._event or "message",
                    id=self._id if self._has_id else None,
                    retry=self._retry,
                )
            )
        self._data = []
        self._event = ""
        self._id = None
        self._has_id = False
        self._retry = None
