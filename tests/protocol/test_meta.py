"""Per-request ``_meta`` (spec ``basic/index.mdx`` §_meta, "Per-request protocol fields";
``basic/versioning.mdx`` for -32022)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.errors import InvalidParams, UnsupportedProtocolVersion
from mcpkit.protocol import jsonrpc, meta, versions
from mcpkit.protocol.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    build_request_meta,
    check_version,
    has_modern_meta,
    read_request_meta,
)

LATEST = "2026-07-28"


def _params(**fields: Any) -> dict[str, Any]:
    """Params whose ``_meta`` holds the given keys (by short name) and nothing else."""
    names = {
        "version": PROTOCOL_VERSION,
        "capabilities": CLIENT_CAPABILITIES,
        "info": CLIENT_INFO,
        "level": LOG_LEVEL,
        "token": meta.PROGRESS_TOKEN,
    }
    return {"_meta": {names[key]: value for key, value in fields.items()}}


def test_the_reserved_keys_are_spelled_as_the_spec_spells_them() -> None:
    assert PROTOCOL_VERSION == "io.modelcontextprotocol/protocolVersion"
    assert CLIENT_CAPABILITIES == "io.modelcontextprotocol/clientCapabilities"
    assert CLIENT_INFO == "io.modelcontextprotocol/clientInfo"
    assert LOG_LEVEL == "io.modelcontextprotocol/logLevel"
    assert meta.SERVER_INFO == "io.modelcontextprotocol/serverInfo"
    assert meta.SUBSCRIPTION_ID == "io.modelcontextprotocol/subscriptionId"
    assert meta.PROGRESS_TOKEN == "progressToken"


def test_version_and_capabilities_are_enough() -> None:
    read = read_request_meta(_params(version=LATEST, capabilities={"roots": {}}))
    assert read.protocol_version == LATEST
    assert read.client_capabilities == {"roots": {}}
    assert read.client_info is None
    assert read.log_level is None
    assert read.progress_token is None


def test_client_info_is_optional_and_read_when_present() -> None:
    info = {"name": "ExampleClient", "version": "1.0.0"}
    read = read_request_meta(_params(version=LATEST, capabilities={}, info=info))
    assert read.client_info == info


@pytest.mark.parametrize(
    ("params", "missing"),
    [
        (None, PROTOCOL_VERSION),
        ({}, PROTOCOL_VERSION),
        ({"name": "x"}, PROTOCOL_VERSION),
        (_params(capabilities={}), PROTOCOL_VERSION),
        (_params(version=LATEST), CLIENT_CAPABILITIES),
        (_params(version=LATEST, info={"name": "c", "version": "1"}), CLIENT_CAPABILITIES),
        ({"_meta": {}}, PROTOCOL_VERSION),
        (_params(version=None, capabilities={}), PROTOCOL_VERSION),
        (_params(version=LATEST, capabilities=None), CLIENT_CAPABILITIES),
    ],
    ids=[
        "no-params",
        "empty-params",
        "no-meta",
        "no-version",
        "no-capabilities",
        "info-but-no-capabilities",
        "empty-meta",
        "version-null",
        "capabilities-null",
    ],
)
def test_a_missing_required_field_is_invalid_params_naming_it(
    params: dict[str, Any] | None, missing: str
) -> None:
    with pytest.raises(InvalidParams) as caught:
        read_request_meta(params)
    assert caught.value.code == -32602
    assert caught.value.message == f"Missing required _meta field {missing}"


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"_meta": "x"}, "_meta"),
        ({"_meta": []}, "_meta"),
        (_params(version=20260728, capabilities={}), PROTOCOL_VERSION),
        (_params(version=LATEST, capabilities=[]), CLIENT_CAPABILITIES),
        (_params(version=LATEST, capabilities={}, info="me"), CLIENT_INFO),
        (_params(version=LATEST, capabilities={}, token=1.5), "progressToken"),
        (_params(version=LATEST, capabilities={}, token=True), "progressToken"),
    ],
    ids=[
        "meta-string",
        "meta-array",
        "version-number",
        "capabilities-array",
        "info-string",
        "token-fractional",
        "token-boolean",
    ],
)
def test_a_field_of_the_wrong_type_is_invalid_params_naming_it(
    params: dict[str, Any], named: str
) -> None:
    with pytest.raises(InvalidParams) as caught:
        read_request_meta(params)
    assert named in caught.value.message


@pytest.mark.parametrize("level", meta.LOG_LEVELS)
def test_every_logging_level_is_recognised(level: str) -> None:
    read = read_request_meta(_params(version=LATEST, capabilities={}, level=level))
    assert read.log_level == level


def test_the_logging_levels_are_the_eight_syslog_severities_in_order() -> None:
    assert meta.LOG_LEVELS == (
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    )
    assert [meta.LOG_SEVERITY[level] for level in meta.LOG_LEVELS] == list(range(8))


@pytest.mark.parametrize(
    "level",
    ["verbose", "DEBUG", "warn", "", 3, ["info"], {"info": 1}],
    ids=["verbose", "upper-case", "warn", "empty", "number", "array", "object"],
)
def test_an_unknown_log_level_is_invalid_params(level: object) -> None:
    with pytest.raises(InvalidParams) as caught:
        read_request_meta(_params(version=LATEST, capabilities={}, level=level))
    assert caught.value.code == -32602
    assert LOG_LEVEL in caught.value.message


@pytest.mark.parametrize("token", ["abc", 0, 42])
def test_a_progress_token_is_a_string_or_an_integer(token: str | int) -> None:
    read = read_request_meta(_params(version=LATEST, capabilities={}, token=token))
    assert read.progress_token == token


def test_unknown_meta_keys_are_kept_untouched() -> None:
    params = _params(version=LATEST, capabilities={})
    params["_meta"]["com.example/trace"] = {"id": 1}
    params["_meta"]["traceparent"] = "00-abc-def-01"
    read = read_request_meta(params)
    assert read.raw["com.example/trace"] == {"id": 1}
    assert read.raw["traceparent"] == "00-abc-def-01"


# -- versions -----------------------------------------------------------------------------------


def test_an_unsupported_version_is_32022_listing_the_supported_ones() -> None:
    with pytest.raises(UnsupportedProtocolVersion) as caught:
        read_request_meta(_params(version="2025-01-01", capabilities={}), [LATEST])
    error = caught.value
    assert error.code == -32022
    assert error.to_error() == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2025-01-01"},
    }
    assert jsonrpc.error_response(1, error) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-01-01"},
        },
    }


def test_a_supported_version_passes_the_check() -> None:
    check_version(LATEST, versions.MODERN_VERSIONS)
    read = read_request_meta(_params(version=LATEST, capabilities={}), [LATEST])
    assert read.protocol_version == LATEST


def test_the_version_is_not_checked_when_no_supported_list_is_given() -> None:
    read = read_request_meta(_params(version="1900-01-01", capabilities={}))
    assert read.protocol_version == "1900-01-01"


def test_missing_fields_are_reported_before_the_version() -> None:
    with pytest.raises(InvalidParams):
        read_request_meta(_params(version="2025-01-01"), [LATEST])


def test_check_version_keeps_the_order_of_the_supported_list() -> None:
    with pytest.raises(UnsupportedProtocolVersion) as caught:
        check_version("2024-01-01", ("2026-07-28", "2025-11-25"))
    assert caught.value.supported == ["2026-07-28", "2025-11-25"]
    assert caught.value.data == {
        "supported": ["2026-07-28", "2025-11-25"],
        "requested": "2024-01-01",
    }


def test_the_revisions_mcpkit_speaks() -> None:
    assert versions.LATEST == LATEST
    assert versions.MODERN_VERSIONS == (LATEST,)
    assert versions.LEGACY_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert versions.is_modern(LATEST)
    assert not versions.is_modern("2025-11-25")
    assert versions.is_legacy("2024-11-05")
    assert not versions.is_legacy(LATEST)
    assert not versions.is_legacy(None)


# -- building ---------------------------------------------------------------------------------


def test_build_request_meta_writes_what_read_request_meta_reads() -> None:
    built = build_request_meta(
        LATEST, {"elicitation": {}}, {"name": "c", "version": "2"}, log_level="warning"
    )
    assert built == {
        PROTOCOL_VERSION: LATEST,
        CLIENT_CAPABILITIES: {"elicitation": {}},
        CLIENT_INFO: {"name": "c", "version": "2"},
        LOG_LEVEL: "warning",
    }
    read = read_request_meta({"_meta": built}, [LATEST])
    assert (read.protocol_version, read.client_info, read.log_level) == (
        LATEST,
        {"name": "c", "version": "2"},
        "warning",
    )


def test_build_request_meta_leaves_out_the_optional_fields_it_was_not_given() -> None:
    assert build_request_meta(LATEST, {}) == {PROTOCOL_VERSION: LATEST, CLIENT_CAPABILITIES: {}}


@pytest.mark.parametrize(
    ("params", "modern"),
    [
        (None, False),
        ({}, False),
        ({"_meta": "x"}, False),
        ({"_meta": {}}, False),
        ({"_meta": {"progressToken": 1}}, False),
        (_params(version=LATEST), True),
        (_params(version="2025-11-25", capabilities={}), True),
    ],
    ids=["none", "empty", "meta-string", "meta-empty", "token-only", "version", "legacy-version"],
)
def test_has_modern_meta_looks_for_the_protocol_version_key(
    params: dict[str, Any] | None, modern: bool
) -> None:
    assert has_modern_meta(params) is modern
