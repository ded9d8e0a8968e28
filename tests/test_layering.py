"""The import layering of design §2, read from the source with ``ast``.

``types <- protocol <- transports <- {server, client} <- host <- {cli, inspector}``;
``auth`` depends on ``types``, ``errors`` and ``protocol`` only; ``errors`` (and
``_version``) may be imported anywhere; ``testing`` may import anything. The protocol
core does no I/O and never awaits, and ``protocol/codec.py`` is the only JSON importer.
Every import counts, including those inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "mcpkit"
EVERYWHERE = {"errors", "_version"}
ALLOWED: dict[str, set[str]] = {
    "types": {"types"},
    "protocol": {"protocol", "types"},
    "auth": {"auth", "protocol", "types"},
    "transports": {"transports", "protocol", "types", "auth"},
    "server": {"server", "transports", "protocol", "types", "auth"},
    "client": {"client", "transports", "protocol", "types", "auth"},
    "host": {"host", "server", "client", "transports", "protocol", "types", "auth"},
    "cli": {"cli", "host", "server", "client", "transports", "protocol", "types", "auth"},
    "inspector": {"inspector", "host", "server", "client", "transports", "protocol", "types"},
}
NO_IO = ("asyncio", "socket", "threading", "subprocess", "selectors", "ssl", "multiprocessing")
JSON_LIBRARIES = ("json", "orjson", "ujson", "simplejson", "rapidjson")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module (and imported member) this file imports."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


SOURCES = sorted(SRC.rglob("*.py"))
IMPORTS = {_module_name(path): _imports(path) for path in SOURCES}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _mcpkit_layers(module: str) -> set[str]:
    return {_layer(name) for name in IMPORTS[module] if name.split(".")[0] == "mcpkit"} - {""}


def test_the_walk_sees_the_package() -> None:
    layers = {_layer(module) for module in IMPORTS}
    assert {"protocol", "types", "transports", "server", "client"} <= layers
    assert "mcpkit.protocol.codec" in IMPORTS
    assert "mcpkit.protocol.errors" not in IMPORTS
    assert "mcpkit.errors" in IMPORTS["mcpkit.protocol.codec"]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    wrong = {
        module: sorted(_mcpkit_layers(module) - ALLOWED[layer] - EVERYWHERE)
        for module in IMPORTS
        if _layer(module) == layer
    }
    assert {module: found for module, found in wrong.items() if found} == {}


def test_every_package_has_a_place_in_the_layering() -> None:
    packages = {_layer(module) for module in IMPORTS if module.count(".") >= 1}
    assert packages - set(ALLOWED) - EVERYWHERE - {"testing"} == set()


@pytest.mark.parametrize("layer", ["protocol", "types"])
def test_the_protocol_core_does_no_io(layer: str) -> None:
    found = {
        module: sorted(name for name in IMPORTS[module] if name.split(".")[0] in NO_IO)
        for module in IMPORTS
        if _layer(module) == layer
    }
    assert {module: names for module, names in found.items() if names} == {}


@pytest.mark.parametrize("layer", ["protocol", "types"])
def test_the_protocol_core_never_awaits(layer: str) -> None:
    asynchronous = [
        f"{path.name}:{node.lineno}"
        for path in SOURCES
        if _layer(_module_name(path)) == layer
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.AsyncFor | ast.AsyncWith)
    ]
    assert asynchronous == []


def test_transports_never_import_server_or_client() -> None:
    for module in IMPORTS:
        if _layer(module) == "transports":
            assert not _mcpkit_layers(module) & {"server", "client"}, module


def test_server_and_client_do_not_import_each_other() -> None:
    for module in IMPORTS:
        if _layer(module) == "server":
            assert "client" not in _mcpkit_layers(module), module
        if _layer(module) == "client":
            assert "server" not in _mcpkit_layers(module), module


def test_library_code_never_imports_the_testing_helpers() -> None:
    importers = sorted(
        module
        for module in IMPORTS
        if _layer(module) not in ("testing", "") and "testing" in _mcpkit_layers(module)
    )
    assert importers == []


def test_codec_is_the_only_json_importer() -> None:
    importers = sorted(
        module
        for module, names in IMPORTS.items()
        if module != "mcpkit.protocol.codec"
        and any(name.split(".")[0] in JSON_LIBRARIES for name in names)
    )
    assert importers == []
