"""Server-Sent Events, both directions, without I/O (the SSE half of the codec).

:func:`event` encodes one event whose ``data:`` line is a compact single-line JSON
message — the conformance harness and most clients read SSE line by line, so a message
must never span lines. :class:`EventParser` is the incremental decoder a client feeds
with response chunks; it follows the WHATWG rules (comment lines start with ``:``, an
empty line dispatches, ``retry`` sets the reconnection delay, ``id`` the last event id)
and bounds the size of one event.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KEEPALIVE", "EventParser", "ServerSentEvent", "event"]

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


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """A decoded event."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class EventTooLarge(ValueError):
    """One event grew past the parser's limit."""


class EventParser:
    """Incremental SSE decoder: ``feed(bytes)`` returns the events completed so far."""

    def __init__(self, max_event: int = DEFAULT_MAX_EVENT) -> None:
        self.max_event = max_event
        self._buffer = b""
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._id: str | None = None
        self.last_event_id: str | None = None
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        self._buffer += chunk
        events: list[ServerSentEvent] = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                if len(self._buffer) > self.max_event:
                    raise EventTooLarge(f"an SSE line exceeds {self.max_event} bytes")
                return events
            end, skip = cut
            line = self._buffer[:end].decode("utf-8", "replace")
            self._buffer = self._buffer[end + skip :]
            finished = self._line(line)
            if finished is not None:
                events.append(finished)

    def _line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._size += len(value) + 1
            if self._size > self.max_event:
                raise EventTooLarge(f"an SSE event exceeds {self.max_event} bytes")
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        elif field == "retry" and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        if self._id is not None:
            self.last_event_id = self._id
        if not self._data:
            self._event = ""
            self._id = None
            return None
        result = ServerSentEvent(
            data="\n".join(self._data),
            event=self._event or "message",
            id=self._id,
            retry=self.retry,
        )
        self._data = []
        self._size = 0
        self._event = ""
        self._id = None
        return result


def _line_end(buffer: bytes) -> tuple[int, int] | None:
    """Index and length of the first line terminator (CRLF, LF or CR)."""
    lf = buffer.find(b"\n")
    cr = buffer.find(b"\r")
    if cr == -1 and lf == -1:
        return None
    if cr == -1 or (lf != -1 and lf < cr):
        return lf, 1
    if cr + 1 == len(buffer):
        return None  # a CR at the very end may be the first half of CRLF
    return (cr, 2) if buffer[cr + 1 : cr + 2] == b"\n" else (cr, 1)
