"""RFC 6570 template matching: exact, linear, and never out of shape."""

from __future__ import annotations

import time
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.server.uri_template import UriTemplate


@pytest.mark.parametrize(
    ("template", "uri", "values"),
    [
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("test://x/{name}.{ext}", "test://x/report.pdf", {"name": "report", "ext": "pdf"}),
        ("test://x/{a}/{b}", "test://x/1/2", {"a": "1", "b": "2"}),
        ("test://x/{a,b}", "test://x/1,2", {"a": "1", "b": "2"}),
        ("test://x/{id}", "test://x/caf%C3%A9", {"id": "café"}),
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("file:///{+path}", "file:///dir/", {"path": "dir/"}),
        ("file:///{+path}/meta", "file:///a/b/meta", {"path": "a/b"}),
        ("test://x{/seg}", "test://x/one", {"seg": "one"}),
        ("test://x{/seg}", "test://x", {}),
        ("test://x{.ext}", "test://x.json", {"ext": "json"}),
        ("test://x{;v}", "test://x;v=1", {"v": "1"}),
        ("test://s{?q,lang}", "test://s?lang=en&q=a%20b", {"q": "a b", "lang": "en"}),
        ("test://s{?q}{&page}", "test://s?q=x&page=2", {"q": "x", "page": "2"}),
        ("test://s?fixed=1{&page}", "test://s?fixed=1&page=3", {"page": "3"}),
        ("test://s{?q}", "test://s?q=a/b?c", {"q": "a/b?c"}),
        ("test://d{#part}", "test://d#intro", {"part": "intro"}),
        ("test://x/{id:3}", "test://x/abc", {"id": "abc"}),
        ("test://plain", "test://plain", {}),
    ],
)
def test_a_matching_uri_gives_its_values(template: str, uri: str, values: dict[str, str]) -> None:
    assert UriTemplate(template).match(uri) == values


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("test://template/{id}/data", "test://template/123/other"),
        ("test://template/{id}/data", "other://template/123/data"),
        ("test://template/{id}/data", "test://template/123/data/"),
        ("test://x/{id:3}", "test://x/abcd"),
        ("test://x/{a,b}", "test://x/1,2,3"),
        ("test://s{?q}", "test://s?q=1&r=2"),
        ("test://s{?q}", "test://s#q=1"),
        ("test://plain", "test://plainer"),
    ],
)
def test_a_uri_of_another_shape_does_not_match(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) is None


def test_variables_and_optional_ones_are_known() -> None:
    template = UriTemplate("test://x{/seg}/{id}{?q,lang}")
    assert template.variables == ("seg", "id", "q", "lang")
    assert template.optional == frozenset({"seg", "q", "lang"})
    assert not UriTemplate("test://plain").is_template


@given(st.text(min_size=1, max_size=40))
def test_a_simple_value_matches_back_only_as_one_safe_segment(value: str) -> None:
    template = UriTemplate("test://t/{id}/end")
    uri = "test://t/" + quote(value, safe="") + "/end"
    found = template.match(uri)
    if value in (".", "..") or any(c in value for c in "/\\%\x00"):
        assert found is None
    else:
        assert found == {"id": value}


@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=5))
def test_a_reserved_value_never_holds_dot_segments(segments: list[str]) -> None:
    template = UriTemplate("file:///{+path}")
    path = "/".join(quote(s, safe="") for s in segments)
    found = template.match("file:///" + path)
    if found is not None:
        parts = found["path"].split("/")
        assert not any(p in (".", "..") for p in parts)
        assert "\\" not in found["path"]
        assert "%" not in found["path"]
        assert not found["path"].startswith("/")


@given(st.text(max_size=200))
def test_matching_never_raises_on_arbitrary_input(uri: str) -> None:
    for template in ("test://{a}/{+b}/x{?c,d}", "{+p}", "x{.e}{#f}", "t{;a,b}"):
        UriTemplate(template).match(uri)


@pytest.mark.parametrize(
    "uri",
    [
        "test://t/" + "a," * 50_000 + "/end",
        "test://t/" + "/" * 100_000,
        "file:///" + "a/" * 50_000 + "b",
        "test://s?" + "q=1&" * 25_000,
    ],
)
def test_matching_is_linear_on_hostile_input(uri: str) -> None:
    templates = [
        UriTemplate("test://t/{a,b,c}/end"),
        UriTemplate("file:///{+path}"),
        UriTemplate("test://s{?q}"),
    ]
    started = time.perf_counter()
    for template in templates:
        template.match(uri)
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    "bad",
    ["", "a{b", "a}b", "{a*}", "{a}{b}", "{?q}x", "{#f}{a}", "{a}{a}", "{1a}", "{+a,b}", "{=a}"],
)
def test_templates_that_cannot_be_matched_exactly_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=r"URI template|variable|reserved|explode|empty"):
        UriTemplate(bad)
