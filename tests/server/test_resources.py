"""resources/list, resources/templates/list, resources/read (spec ``server/resources.mdx``)."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from mcpkit import CacheHint, Context, InvalidParams, Server, content

from .wire import INTERNAL_ERROR, INVALID_PARAMS, Direct

PNG = b"\x89PNG\r\n\x1a\n"


def library() -> Server:
    server = Server("library", "1.0.0")

    @server.resource(
        "file:///notes/readme.md",
        title="Read me",
        mime_type="text/markdown",
        annotations=content.annotation(audience=["user"], priority=0.8),
        icons=[{"src": "https://example.com/md.png", "mimeType": "image/png"}],
        size=12,
    )
    def readme() -> str:
        """The project's read-me."""
        return "# Read me\n"

    @server.resource("file:///logo.png", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @server.resource("test://many")
    def many() -> list[content.ResourceContents]:
        return [
            content.text_resource("test://many/a", "alpha", mime_type="text/plain"),
            content.blob_resource("test://many/b", b"\x00\x01"),
        ]

    @server.resource("test://json")
    def data() -> dict[str, Any]:
        return {"answer": 42}

    @server.resource("test://gone")
    def gone() -> None:
        return None

    @server.resource("test://empty-list")
    def empty_list() -> list[content.ResourceContents]:
        return []

    @server.resource("test://empty-text", mime_type="text/plain")
    def empty_text() -> str:
        return ""

    @server.resource("test://broken")
    def broken() -> str:
        raise RuntimeError("backend down")

    @server.resource("test://refuses")
    def refuses() -> str:
        raise InvalidParams("Resource not found", {"uri": "test://refuses"})

    @server.resource("test://template/{id}/data", mime_type="application/json")
    def template(id: str) -> dict[str, Any]:
        """Data for one id."""
        return {"id": id}

    @server.resource("test://numbers/{n}")
    def numbers(n: int) -> str:
        return f"{n * 2}"

    @server.resource("file:///{+path}", mime_type="text/plain")
    def files(path: str) -> str:
        return f"file {path}"

    @server.resource("test://search{?q,lang}")
    def search(q: str = "", lang: str = "en") -> str:
        return f"q={q} lang={lang}"

    return server


async def test_resources_list_gives_uri_name_and_metadata() -> None:
    result = (await Direct(library()).call("resources/list")).complete
    readme = result["resources"][0]
    assert readme == {
        "uri": "file:///notes/readme.md",
        "name": "readme",
        "title": "Read me",
        "description": "The project's read-me.",
        "mimeType": "text/markdown",
        "annotations": {"audience": ["user"], "priority": 0.8},
        "icons": [{"src": "https://example.com/md.png", "mimeType": "image/png"}],
        "size": 12,
    }
    assert all("{" not in r["uri"] for r in result["resources"])


async def test_templates_list_gives_the_uri_templates() -> None:
    result = (await Direct(library()).call("resources/templates/list")).complete
    assert [t["uriTemplate"] for t in result["resourceTemplates"]] == [
        "test://template/{id}/data",
        "test://numbers/{n}",
        "file:///{+path}",
        "test://search{?q,lang}",
    ]
    assert result["resourceTemplates"][0] == {
        "uriTemplate": "test://template/{id}/data",
        "name": "template",
        "description": "Data for one id.",
        "mimeType": "application/json",
    }


async def read(server: Server, uri: str) -> dict[str, Any]:
    return (await Direct(server).call("resources/read", {"uri": uri})).complete


async def test_text_contents_carry_uri_and_mime_type() -> None:
    result = await read(library(), "file:///notes/readme.md")
    assert result["contents"] == [
        {"uri": "file:///notes/readme.md", "mimeType": "text/markdown", "text": "# Read me\n"}
    ]


async def test_binary_contents_are_base64_blobs() -> None:
    result = await read(library(), "file:///logo.png")
    (entry,) = result["contents"]
    assert entry["mimeType"] == "image/png"
    assert base64.b64decode(entry["blob"]) == PNG


async def test_a_read_may_return_several_contents() -> None:
    result = await read(library(), "test://many")
    assert result["contents"] == [
        {"uri": "test://many/a", "mimeType": "text/plain", "text": "alpha"},
        {"uri": "test://many/b", "blob": "AAE="},
    ]


async def test_json_data_is_json_text() -> None:
    result = await read(library(), "test://json")
    assert result["contents"] == [
        {"uri": "test://json", "mimeType": "application/json", "text": '{"answer":42}'}
    ]


async def test_an_empty_text_resource_exists() -> None:
    result = await read(library(), "test://empty-text")
    assert result["contents"] == [
        {"uri": "test://empty-text", "mimeType": "text/plain", "text": ""}
    ]


@pytest.mark.parametrize(
    "uri",
    [
        "test://nonexistent-resource-for-conformance-testing",
        "test://gone",
        "test://empty-list",
        "test://refuses",
        "test://numbers/abc",
    ],
)
async def test_an_unknown_resource_is_invalid_params_with_its_uri(uri: str) -> None:
    reply = await Direct(library()).call("resources/read", {"uri": uri})
    assert reply.error["code"] == INVALID_PARAMS
    assert reply.error["data"] == {"uri": uri}
    assert "result" not in reply.message


@pytest.mark.parametrize("uri", [None, 5, ["x"]])
async def test_a_uri_that_is_not_a_string_is_invalid_params(uri: Any) -> None:
    reply = await Direct(library()).call("resources/read", {"uri": uri})
    assert reply.error["code"] == INVALID_PARAMS


async def test_a_read_function_that_crashes_is_an_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        reply = await Direct(library()).call("resources/read", {"uri": "test://broken"})
    assert reply.error == {"code": INTERNAL_ERROR, "message": "Internal error"}
    assert "backend down" in caplog.text


async def test_a_template_reads_with_its_variables() -> None:
    result = await read(library(), "test://template/123/data")
    assert result["contents"] == [
        {"uri": "test://template/123/data", "mimeType": "application/json", "text": '{"id":"123"}'}
    ]
    assert (await read(library(), "test://numbers/21"))["contents"][0]["text"] == "42"


async def test_a_reserved_expansion_spans_path_segments() -> None:
    result = await read(library(), "file:///docs/guide/intro.txt")
    assert result["contents"][0]["text"] == "file docs/guide/intro.txt"


async def test_query_variables_are_optional_and_order_free() -> None:
    server = library()
    assert (await read(server, "test://search"))["contents"][0]["text"] == "q= lang=en"
    both = await read(server, "test://search?lang=fr&q=caf%C3%A9")
    assert both["contents"][0]["text"] == "q=café lang=fr"


@pytest.mark.parametrize(
    "uri",
    [
        "test://template/../data",
        "test://template/./data",
        "test://template/..%2F..%2Fetc/data",
        "test://template/a%2Fb/data",
        "test://template/a%5Cb/data",
        "test://template/a/b/data",
        "test://template//data",
        "test://template/%252F/data",
        "test://template/%ZZ/data",
        "test://template/%C3/data",
        "file:///../etc/passwd",
        "file:///docs/../../etc/passwd",
        "file:///docs/%2E%2E/%2E%2E/etc/passwd",
        "file:///docs/..%2F..%2Fetc/passwd",
        "file:////etc/passwd",
        "file:///docs//passwd",
        "file:///docs\\..\\secret",
        "file:///a%00b",
        "file:///a%2525",
        "test://search?q=1&evil=2",
        "test://search?q=1&q=2",
    ],
)
async def test_template_values_cannot_escape_the_template_shape(uri: str) -> None:
    reply = await Direct(library()).call("resources/read", {"uri": uri})
    assert reply.error["code"] == INVALID_PARAMS, reply.message
    assert reply.error["data"] == {"uri": uri}


async def test_a_fixed_uri_wins_over_a_template() -> None:
    server = Server("s")

    @server.resource("test://item/{name}")
    def any_item(name: str) -> str:
        return f"template {name}"

    @server.resource("test://item/special")
    def special() -> str:
        return "fixed"

    assert (await read(server, "test://item/special"))["contents"][0]["text"] == "fixed"
    assert (await read(server, "test://item/other"))["contents"][0]["text"] == "template other"


async def test_a_read_function_may_take_the_context() -> None:
    server = Server("s")

    @server.resource("test://who")
    async def who(ctx: Context) -> str:
        return str(ctx.principal)

    reply = await Direct(server, principal="bob").call("resources/read", {"uri": "test://who"})
    assert reply.complete["contents"][0]["text"] == "bob"


async def test_a_resource_needing_a_client_capability_refuses_clients_without_it() -> None:
    server = Server("s")

    @server.resource("test://roots-aware", requires={"roots": {}})
    def aware() -> str:
        return "ok"

    reply = await Direct(server).call(
        "resources/read", {"uri": "test://roots-aware"}, capabilities={}
    )
    assert reply.error["code"] == -32021
    assert reply.error["data"] == {"requiredCapabilities": {"roots": {}}}


@pytest.mark.parametrize(
    ("register", "error"),
    [
        (lambda s: s.add_resource(lambda x: "", "test://fixed"), TypeError),
        (lambda s: s.add_resource(lambda: "", "test://{id}"), TypeError),
        (lambda s: s.add_resource(lambda id, extra: "", "test://{id}"), TypeError),
        (lambda s: s.add_resource(lambda q: "", "test://x{?q}"), TypeError),
        (lambda s: s.add_resource(lambda id: "", "test://{id*}"), ValueError),
        (lambda s: s.add_resource(lambda a, b: "", "test://{a}{b}"), ValueError),
        (lambda s: s.add_resource(lambda: "", "test://x", size=-1), ValueError),
    ],
)
def test_registration_refuses_functions_that_do_not_fit_the_uri(
    register: Any, error: type[Exception]
) -> None:
    with pytest.raises(error):
        register(Server("s"))


async def test_a_resource_cache_hint_overrides_the_server_policy() -> None:
    server = Server("s")

    @server.resource("test://stable", cache=CacheHint(60_000, "public"))
    def stable() -> str:
        return "same for everyone"

    @server.resource("test://default")
    def default() -> str:
        return "per user"

    assert (await read(server, "test://stable"))["ttlMs"] == 60_000
    assert (await read(server, "test://stable"))["cacheScope"] == "public"
    assert (await read(server, "test://default"))["cacheScope"] == "private"


async def test_resources_added_and_removed_at_run_time_change_the_lists() -> None:
    server = Server("s")
    direct = Direct(server)

    def later() -> str:
        return "late"

    server.add_resource(later, "test://later")
    assert [r["uri"] for r in (await direct.call("resources/list")).complete["resources"]] == [
        "test://later"
    ]
    server.remove_resource("test://later")
    reply = await direct.call("resources/list")
    assert reply.error["code"] == -32601
