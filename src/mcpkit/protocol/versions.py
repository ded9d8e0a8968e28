"""Protocol revisions mcpkit speaks (spec ``basic/versioning.mdx``).

*Modern* revisions carry version, identity and capabilities in every request's
``_meta``; *legacy* revisions open with an ``initialize`` handshake.
"""

from __future__ import annotations

LATEST = "2026-07-28"
MODERN_VERSIONS: tuple[str, ...] = (LATEST,)
LATEST_LEGACY = "2025-11-25"
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
ALL_VERSIONS: tuple[str, ...] = MODERN_VERSIONS + LEGACY_VERSIONS

__all__ = [
    "ALL_VERSIONS",
    "LATEST",
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "is_legacy",
    "is_modern",
]


def is_modern(version: object) -> bool:
    return version in MODERN_VERSIONS


def is_legacy(version: object) -> bool:
    return version in LEGACY_VERSIONS
