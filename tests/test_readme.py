"""Every example in the README runs and does what the README says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, re.DOTALL)
PYTHON_BLOCKS = [code for lang, code in BLOCKS if lang == "python"]
SHELL_LINES = [
    line.split("#", 1)[0].strip()
    for lang, code in BLOCKS
    if lang == "sh"
    for line in code.splitlines()
    if line.strip().startswith("mcpkit ")
]


def venv_env() -> dict[str, str]:
    """Our environment with the virtualenv's bin first, as after ``source .venv/bin/activate``."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def test_the_readme_names_the_two_setup_commands() -> None:
    assert "make run" in README
    assert "make test" in README
    assert len(PYTHON_BLOCKS) >= 2
    assert SHELL_LINES


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_each_python_example_runs(index: int, tmp_path: Path) -> None:
    script = tmp_path / f"example_{index}.py"
    script.write_text(PYTHON_BLOCKS[index], encoding="utf-8")
    # Servers serve stdio until end of input: give them none.
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        input=b"",
        capture_output=True,
        timeout=60,
        env=venv_env(),
    )
    assert result.returncode == 0, result.stderr.decode()


def test_the_client_example_prints_the_note() -> None:
    (client,) = [code for code in PYTHON_BLOCKS if "Client.stdio" in code]
    result = subprocess.run(
        [sys.executable, "-c", client], cwd=ROOT, capture_output=True, timeout=60, env=venv_env()
    )
    assert result.returncode == 0, result.stderr.decode()
    assert "Demo the MCP server at 10:00." in result.stdout.decode()


def test_the_call_example_prints_five() -> None:
    (line,) = [line for line in SHELL_LINES if line.startswith("mcpkit call")]
    result = subprocess.run(
        line, shell=True, cwd=ROOT, capture_output=True, timeout=60, env=venv_env()
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "5"


def test_the_run_example_serves_over_stdio() -> None:
    (line,) = [line for line in SHELL_LINES if line.startswith("mcpkit run")]
    request = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
        b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}}}\n'
    )
    result = subprocess.run(
        line, shell=True, cwd=ROOT, input=request, capture_output=True, timeout=60, env=venv_env()
    )
    assert result.returncode == 0, result.stderr.decode()
    assert b'"name":"read_note"' in result.stdout


def test_the_elicitation_example_books_the_table() -> None:
    (example,) = [code for code in PYTHON_BLOCKS if "book_table" in code]
    result = subprocess.run(
        [sys.executable, "-c", example], cwd=ROOT, capture_output=True, timeout=60, env=venv_env()
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "Booked Chez Ada for 4."


def test_the_mounting_example_builds_a_starlette_app() -> None:
    (example,) = [code for code in PYTHON_BLOCKS if "Starlette(" in code]
    namespace: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), namespace)
    assert type(namespace["app"]).__name__ == "Starlette"
