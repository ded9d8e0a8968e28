"""The deprecated HTTP+SSE transport, client end (spec ``2024-11-05/basic/transports.mdx``
§HTTP with SSE; deprecated since 2025-03-26, kept for the oldest servers).

The client opens one GET stream; its first event, ``endpoint``, names the URL to POST
messages to; every server message then arrives as a ``message`` event on that stream.
The endpoint must be on the same origin as the stream: a server cannot redirect the
client's messages to another host.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from mcpkit.errors import ConnectionClosed, RequestId, TransportError
from mcpkit.protocol import codec
from mcpkit.protocol.framing import DEFAULT_MAX_LINE
from mcpkit.transports.http_client import (
    AuthorizationRequired,
    HttpStatusError,
    SseParser,
    decode_event,
    has_credentials,
    load_httpx,
    same_origin,
    status_error,
)

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("mcpkit.transport")

__all__ = ["SseClientTransport"]

Receiver = Callable[[Any], None]


class SseClientTransport:
    """Talks the 2024-11-05 HTTP+SSE transport to one server."""

    era = "legacy"

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        http: httpx.AsyncClient | None = None,
        endpoint_timeout: float = 10.0,
        max_message: int = DEFAULT_MAX_LINE,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.auth = auth
        self._own_http = http is None
        lib = load_httpx()
        self.http = http or lib.AsyncClient(timeout=lib.Timeout(10.0, read=None))
        self.endpoint_timeout = endpoint_timeout
        self.max_message = max_message
        self.endpoint: str | None = None
        self.protocol_version: str | None = None
        self._response: httpx.Response | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def server_key(self) -> str:
        return f"http:{self.url}"

    @property
    def pid(self) -> None:
        return None

    def use_legacy(self, version: str | None = None) -> None:
        self.protocol_version = version

    async def start(self, receiver: Receiver, on_close: Callable[[], None]) -> None:
        """Open the stream and wait for the ``endpoint`` event."""
        request = self.http.build_request(
            "GET", self.url, headers={"Accept": "text/event-stream", **self.headers}
        )
        try:
            response = await self.http.send(request, stream=True, auth=self.auth)
        except load_httpx().HTTPError as exc:
            raise ConnectionClosed(f"cannot open the SSE stream at {self.url}: {exc}") from exc
        content_type = response.headers.get("content-type", "").split(";")[0].strip()
        if response.status_code != 200 or content_type != "text/event-stream":
            await response.aclose()
            error = status_error(
                response.status_code, "", response.headers, has_credentials(self.auth, self.headers)
            )
            if isinstance(error, AuthorizationRequired):
                raise error
            raise HttpStatusError(
                response.status_code, "", f"{self.url} did not open an SSE stream"
            )
        self._response = response
        parser = SseParser(self.max_message)
        chunks = response.aiter_bytes()
        try:
            self.endpoint = await asyncio.wait_for(
                self._wait_endpoint(chunks, parser, receiver), self.endpoint_timeout
            )
        except (TimeoutError, TransportError, load_httpx().HTTPError) as exc:
            await response.aclose()
            raise TransportError(f"{self.url} sent no usable endpoint event: {exc}") from exc
        self._reader = asyncio.get_running_loop().create_task(
            self._read(chunks, parser, receiver, on_close)
        )

    async def _wait_endpoint(self, chunks: Any, parser: SseParser, receiver: Receiver) -> str:
        async for chunk in chunks:
            for event in parser.feed(chunk):
                if event.event == "endpoint":
                    endpoint = urljoin(self.url, event.data.strip())
                    if not same_origin(endpoint, self.url):
                        raise TransportError(f"the endpoint {endpoint!r} is on another origin")
                    return endpoint
                message = decode_event(event)
                if message is not None:
                    receiver(message)
        raise TransportError("the stream ended before the endpoint event")

    async def _read(
        self, chunks: Any, parser: SseParser, receiver: Receiver, on_close: Callable[[], None]
    ) -> None:
        try:
            async for chunk in chunks:
                for event in parser.feed(chunk):
                    if event.event != "message":
                        continue
                    message = decode_event(event)
                    if message is not None:
                        receiver(message)
        except (load_httpx().HTTPError, TransportError) as exc:
            logger.info("the SSE stream broke: %s", exc)
        finally:
            if not self._closed:
                on_close()

    async def send(
        self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> None:
        if self._closed or self.endpoint is None:
            raise ConnectionClosed("the SSE transport is not open")
        all_headers = {"Content-Type": "application/json", **self.headers}
        if headers:
            all_headers.update(headers)
        try:
            request = self.http.build_request(
                "POST", self.endpoint, content=codec.dumps(message), headers=all_headers
            )
            response = await self.http.send(request, auth=self.auth)
        except load_httpx().HTTPError as exc:
            raise ConnectionClosed(f"POST to {self.endpoint} failed: {exc}") from exc
        if response.status_code >= 400:
            raise status_error(
                response.status_code,
                response.text[:1000],
                response.headers,
                has_credentials(self.auth, self.headers),
            )

    async def cancel(self, request_id: RequestId) -> bool:
        return False

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._response is not None:
            await self._response.aclose()
        if self._own_http:
            await self.http.aclose()
