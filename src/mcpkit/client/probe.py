"""Which era does a server speak? (spec ``basic/versioning.mdx`` §Backward Compatibility,
``basic/transports/stdio.mdx`` and ``basic/transports/streamable-http.mdx`` §Backward
Compatibility.)

The probe sends ``server/discover`` with the preferred modern version in ``_meta``:

* a ``DiscoverResult`` that lists a version we speak -> modern, at the best mutual version;
* a *recognised modern error* (-32022 naming its versions, -32021, -32020) -> modern:
  retry with a supported version, never fall back;
* anything else -> legacy: any other JSON-RPC error (whatever its code), a result that is
  not a ``DiscoverResult``, an HTTP 4xx without a modern error body, silence until the
  probe timeout, or a process that died on the unknown first message (it is restarted).

On HTTP a failed legacy ``initialize`` (400, 404 or 405 without a modern error) leads to
the deprecated HTTP+SSE transport. Connection failures are not a verdict: they propagate.
The verdict belongs to the server, so it is cached per server (stdio: the command line,
environment and directory; HTTP: the endpoint URL) for the life of the process, and
dropped when the cached assumption fails.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcpkit.errors import (
    HeaderMismatch,
    MissingRequiredClientCapability,
    ProtocolError,
    RequestTimeout,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol import versions

if TYPE_CHECKING:
    from mcpkit.client.client import Client

logger = logging.getLogger("mcpkit.client")

__all__ = [
    "DEFAULT_ERA_CACHE",
    "EraCache",
    "Verdict",
    "detect",
    "pick_legacy",
    "pick_modern",
]

Era = Literal["modern", "legacy"]
Wire = Literal["stream", "streamable", "sse"]

RECOGNISED_MODERN_ERRORS: tuple[type[ProtocolError], ...] = (
    UnsupportedProtocolVersion,
    MissingRequiredClientCapability,
    HeaderMismatch,
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A server's era, the version to speak, and (HTTP) which transport shape works."""

    era: Era
    version: str
    wire: Wire = "stream"


class EraCache:
    """Verdicts by server key, for the life of the process."""

    def __init__(self) -> None:
        self._verdicts: dict[str, Verdict] = {}

    def get(self, key: str | None) -> Verdict | None:
        return self._verdicts.get(key) if key else None

    def put(self, key: str | None, verdict: Verdict) -> None:
        if key:
            self._verdicts[key] = verdict

    def forget(self, key: str | None) -> None:
        if key:
            self._verdicts.pop(key, None)

    def clear(self) -> None:
        self._verdicts.clear()


DEFAULT_ERA_CACHE = EraCache()


def pick_modern(supported: Sequence[Any], preferred: str) -> str | None:
    """The preferred version if the server has it, else the newest mutual modern one."""
    offered = [v for v in supported if isinstance(v, str)]
    if preferred in offered and versions.is_modern(preferred):
        return preferred
    mutual = [v for v in versions.MODERN_VERSIONS if v in offered]
    return max(mutual) if mutual else None


def pick_legacy(supported: Sequence[Any]) -> str | None:
    """The newest legacy version in ``supported`` that we speak."""
    mutual = [v for v in versions.LEGACY_VERSIONS if v in supported]
    return max(mutual) if mutual else None


def is_discover_result(result: Mapping[str, Any]) -> bool:
    return isinstance(result.get("supportedVersions"), list) and isinstance(
        result.get("capabilities"), dict
    )


async def detect(client: Client) -> tuple[Verdict, dict[str, Any] | None]:
    """Probe the server behind ``client``; return the verdict and the DiscoverResult."""
    preferred = client.protocol_version
    version = preferred
    for _attempt in range(2):
        try:
            result = await client._probe_discover(version)
        except UnsupportedProtocolVersion as exc:
            mutual = pick_modern(exc.supported, preferred)
            if mutual is not None and mutual != version:
                version = mutual
                continue
            if mutual is not None:
                return Verdict("modern", mutual, client._wire()), None
            if pick_legacy(exc.supported) is not None:
                return _legacy(client, "the server lists only legacy versions"), None
            raise
        except RECOGNISED_MODERN_ERRORS as exc:
            logger.info("probe: modern server (%s)", exc.message)
            return Verdict("modern", version, client._wire()), None
        except ProtocolError as exc:
            return _legacy(client, f"server/discover failed with {exc.effective_code}"), None
        except RequestTimeout:
            return _legacy(client, "no answer to server/discover"), None
        except TransportError as exc:
            if not client._probe_failure_means_legacy(exc):
                raise
            await client._recover_after_probe()
            return _legacy(client, f"the probe failed: {exc}"), None
        if not is_discover_result(result):
            return _legacy(client, "the answer to server/discover is not a DiscoverResult"), None
        mutual = pick_modern(result["supportedVersions"], preferred)
        if mutual is None:
            return _legacy(client, "the server lists no modern version we speak"), None
        return Verdict("modern", mutual, client._wire()), result
    raise UnsupportedProtocolVersion(list(versions.MODERN_VERSIONS), version)


def _legacy(client: Client, reason: str) -> Verdict:
    logger.info("probe: legacy server (%s)", reason)
    wire: Wire = "stream" if client._wire() == "stream" else "streamable"
    return Verdict("legacy", client.legacy_version, wire)
