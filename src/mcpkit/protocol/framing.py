"""Newline-delimited JSON framing (spec ``basic/transports/stdio.mdx``).

:class:`LineReader` is incremental and never blocks: ``feed(bytes)`` returns the frames
completed by those bytes and keeps the unfinished tail. A frame is either a decoded JSON
value or a :class:`~mcpkit.errors.ProtocolError` describing a line that could not be
decoded (the reader goes on with the next line). A line longer than ``max_line`` is
rejected without being kept: the reader discards bytes up to the next newline and holds
at most ``max_line`` bytes at any time, so a 256 MiB line with no newline costs no more
memory than the limit.

:func:`encode` writes one message per line; the codec never emits a raw newline inside a
message, so one message is always exactly one line.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import InvalidRequest, ProtocolError
from mcpkit.protocol import codec

DEFAULT_MAX_LINE = 4 * 1024 * 1024

__all__ = ["DEFAULT_MAX_LINE", "LineReader", "encode"]


def encode(message: Any) -> bytes:
    """One message as one line, newline included."""
    return codec.dumps(message) + b"\n"


class LineReader:
    """Incremental NDJSON decoder with a hard per-line size limit."""

    __slots__ = ("_buffer", "_discarding", "max_depth", "max_line")

    def __init__(
        self, max_line: int = DEFAULT_MAX_LINE, max_depth: int = codec.DEFAULT_MAX_DEPTH
    ) -> None:
        if max_line < 2:
            raise ValueError("max_line must be at least 2 bytes")
        self.max_line = max_line
        self.max_depth = max_depth
        self._buffer = bytearray()
        self._discarding = False

    @property
    def buffered(self) -> int:
        """Bytes held for an unfinished line."""
        return len(self._buffer)

    def feed(self, data: bytes | bytearray) -> list[Any]:
        """Frames completed by ``data``: decoded values, or ProtocolError for bad lines."""
        frames: list[Any] = []
        start = 0
        end = len(data)
        while start < end:
            newline = data.find(b"\n", start)
            if newline < 0:
                if not self._discarding:
                    self._keep(data, start, frames)
                break
            if self._discarding:
                self._discarding = False
            elif self._buffer:
                if len(self._buffer) + (newline - start) > self.max_line:
                    self._buffer.clear()
                    frames.append(self._too_long())
                else:
                    self._buffer += data[start:newline]
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    self._decode(line, frames)
            elif newline - start > self.max_line:
                frames.append(self._too_long())
            else:
                self._decode(data[start:newline], frames)
            start = newline + 1
        return frames

    def close(self) -> list[Any]:
        """End of input: a final line without a newline is still a message."""
        frames: list[Any] = []
        if self._buffer and not self._discarding:
            line = bytes(self._buffer)
            self._decode(line, frames)
        self._buffer.clear()
        self._discarding = False
        return frames

    def _keep(self, data: bytes | bytearray, start: int, frames: list[Any]) -> None:
        """Hold ``data[start:]`` for the next feed, or start discarding an over-long line."""
        if len(self._buffer) + len(data) - start > self.max_line:
            self._buffer.clear()
            self._discarding = True
            frames.append(self._too_long())
            return
        self._buffer += data[start:] if start else data

    def _too_long(self) -> ProtocolError:
        return InvalidRequest(f"Message exceeds the limit of {self.max_line} bytes")

    def _decode(self, line: bytes | bytearray, frames: list[Any]) -> None:
        if line[-1:] == b"\r":
            line = line[:-1]
        if not line or line.isspace():
            return
        try:
            frames.append(codec.loads(line, self.max_depth))
        except ProtocolError as exc:
            frames.append(exc)
