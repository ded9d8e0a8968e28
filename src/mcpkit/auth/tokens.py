"""What an OAuth client remembers, and where: registrations by issuer, tokens by server.

Spec ``basic/authorization/client-registration.mdx`` §Authorization Server Binding:
client credentials are keyed by the authorization server's ``issuer`` and never reused
with another one; ``security-considerations.mdx`` §Token Theft: tokens are stored
securely. :class:`FileTokenStore` writes a JSON file with mode 0600 atomically (a new
file is written, synced and renamed over the old one), in a 0700 directory it creates.
Secrets never appear in a ``repr``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import stat
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mcpkit.protocol import codec

__all__ = [
    "AuthState",
    "ClientRegistration",
    "FileTokenStore",
    "MemoryTokenStore",
    "TokenSet",
    "TokenStore",
]

logger = logging.getLogger("mcpkit.auth")

_FORMAT = 1


@dataclass
class ClientRegistration:
    """A client identity at one authorization server.

    ``source`` is ``"preregistered"``, ``"cimd"`` (a Client ID Metadata Document URL
    used as ``client_id``) or ``"dcr"`` (Dynamic Client Registration); ``auth_method``
    is the token endpoint authentication method (``client_secret_basic``,
    ``client_secret_post`` or ``none``).
    """

    issuer: str
    client_id: str
    auth_method: str = "none"
    client_secret: str | None = field(default=None, repr=False)
    redirect_uris: tuple[str, ...] = ()
    source: str = "dcr"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientRegistration:
        return cls(
            issuer=str(data["issuer"]),
            client_id=str(data["client_id"]),
            auth_method=str(data.get("auth_method", "none")),
            client_secret=data.get("client_secret"),
            redirect_uris=tuple(data.get("redirect_uris", ())),
            source=str(data.get("source", "dcr")),
        )


@dataclass
class TokenSet:
    """Tokens for one MCP server, with where they came from.

    ``issuer`` and ``token_endpoint`` bind the tokens to the authorization server that
    issued them: a refresh token is only ever sent back there. ``scope`` is what the
    server granted (or, when it did not say, what was asked); ``requested_scope`` is
    what the client asked for, the base of the step-up union.
    """

    resource: str
    issuer: str
    token_endpoint: str
    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    scope: tuple[str, ...] = ()
    requested_scope: tuple[str, ...] = ()

    def expired(self, now: float, skew: float = 30.0) -> bool:
        return self.expires_at is not None and self.expires_at - skew <= now

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TokenSet:
        expires_at = data.get("expires_at")
        return cls(
            resource=str(data["resource"]),
            issuer=str(data["issuer"]),
            token_endpoint=str(data["token_endpoint"]),
            access_token=str(data["access_token"]),
            token_type=str(data.get("token_type", "Bearer")),
            expires_at=float(expires_at) if expires_at is not None else None,
            refresh_token=data.get("refresh_token"),
            scope=tuple(data.get("scope", ())),
            requested_scope=tuple(data.get("requested_scope", ())),
        )


@dataclass
class AuthState:
    """Everything one OAuth client persists: registrations by issuer, tokens by server."""

    registrations: dict[str, ClientRegistration] = field(default_factory=dict)
    tokens: dict[str, TokenSet] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "registrations": {k: asdict(v) for k, v in self.registrations.items()},
            "tokens": {k: asdict(v) for k, v in self.tokens.items()},
        }

    @classmethod
    def from_json(cls, data: Any) -> AuthState:
        """Rebuild from :meth:`to_json`; raises ValueError on anything else."""
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError("not an mcpkit auth state document")
        try:
            return cls(
                registrations={
                    k: ClientRegistration.from_json(v) for k, v in data["registrations"].items()
                },
                tokens={k: TokenSet.from_json(v) for k, v in data["tokens"].items()},
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ValueError(f"malformed auth state: {type(exc).__name__}") from None


class TokenStore(Protocol):
    """Where an OAuth client keeps its :class:`AuthState` between runs."""

    async def load(self) -> AuthState: ...

    async def save(self, state: AuthState) -> None: ...


class MemoryTokenStore:
    """Keeps the state in memory (a copy, so later changes need an explicit save)."""

    def __init__(self, state: AuthState | None = None) -> None:
        self._state = copy.deepcopy(state) if state is not None else AuthState()

    async def load(self) -> AuthState:
        return copy.deepcopy(self._state)

    async def save(self, state: AuthState) -> None:
        self._state = copy.deepcopy(state)


class FileTokenStore:
    """A JSON file readable only by its owner (0600), replaced atomically on save.

    A missing file is an empty state; an unreadable or malformed one is logged and
    treated as empty (the client then authorizes again) rather than crashing. A file
    that others can read has its mode tightened to 0600 on load.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    async def load(self) -> AuthState:
        return await asyncio.to_thread(self._load)

    async def save(self, state: AuthState) -> None:
        await asyncio.to_thread(self._save, codec.dumps(state.to_json()))

    def _load(self) -> AuthState:
        try:
            mode = self.path.stat().st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                logger.warning("token store %s was readable by others; now 0600", self.path)
                os.chmod(self.path, 0o600)
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return AuthState()
        try:
            return AuthState.from_json(codec.loads(raw))
        except Exception as exc:
            logger.warning("token store %s is unreadable (%s); starting empty", self.path, exc)
            return AuthState()

    def _save(self, data: bytes) -> None:
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=directory)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
