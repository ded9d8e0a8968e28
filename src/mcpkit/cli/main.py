"""The ``mcpkit`` command.

``mcpkit call <tool> [key=value ...] -- <server command ...>``
``mcpkit call <tool> [key=value ...] --url <endpoint> [--oauth [--token-file PATH]]``
    Start a server over stdio (or reach one over Streamable HTTP; ``--oauth`` signs in
    through the browser when the server asks, keeping tokens in ``--token-file``), call
    one tool and print the result. Values are parsed as
    strict JSON where they parse (``n=3`` is a number, ``flag=true`` a boolean,
    ``name=bob`` and ``x=NaN`` strings, ``'s="3"'`` the string ``3``). Exit status 1
    when the tool reports an error; 2 for bad usage, a server that cannot be started or
    a protocol error; 130 when interrupted (the server is shut down first).

``mcpkit run <file.py[:object]> [--http [--host 127.0.0.1] [--port 8000] [--path /mcp]]``
    Serve the ``Server`` defined in a Python file over stdio (default) or Streamable HTTP
    with uvicorn. For stdio, stdout is reserved for protocol messages before the file is
    imported, so a ``print()`` at import time lands on stderr too. Exit status 2 when
    the file or the server cannot be found.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcpkit.errors import MCPError, ProtocolError
from mcpkit.protocol import codec
from mcpkit.transports.stdio import protected_stdout, run_stdio

__all__ = ["main"]


class UsageError(Exception):
    """The command line is wrong; the message says how."""


def parse_assignments(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` words to arguments; values are strict JSON when they parse as JSON."""
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"expected key=value, got {pair!r}")
        if key in arguments:
            raise UsageError(f"argument {key!r} is given twice")
        try:
            arguments[key] = codec.loads(raw)
        except ProtocolError:
            arguments[key] = raw
    return arguments


def _split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" not in argv:
        return argv, []
    index = argv.index("--")
    return argv[:index], argv[index + 1 :]


async def _call(tool: str, arguments: dict[str, Any], command: list[str], args: Any) -> int:
    """Call ``tool`` on the server ``args`` name (``--url``) or ``command`` starts."""
    from mcpkit.client.client import Client

    if args.url is not None:
        client = Client.http(args.url, oauth=args.oauth, token_store=args.token_file)
    else:
        client = Client.stdio(command, stderr=lambda line: print(line, file=sys.stderr))
    async with client:
        result = await client.call_tool(tool, arguments)
    if args.json:
        print(codec.dumps_indented(result.raw))
    else:
        if result.text:
            print(result.text)
        for block in result.content:
            if block.get("type") != "text":
                print(codec.dumps(block).decode())
    return 1 if result.is_error else 0


def load_server(target: str) -> Any:
    """Import ``file.py`` (or ``file.py:name``) and return the server it defines."""
    path_text, _, attribute = target.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    from mcpkit.server.app import Server

    if attribute:
        found = getattr(module, attribute, None)
        if not isinstance(found, Server):
            raise UsageError(f"{target} is not an mcpkit Server")
        return found
    servers = [value for value in vars(module).values() if isinstance(value, Server)]
    if len(servers) != 1:
        raise UsageError(f"{path} defines {len(servers)} servers; name one as {path}:<name>")
    return servers[0]


def _run_http(target: str, host: str, port: int, path: str) -> int:
    try:
        server = load_server(target)
    except UsageError as exc:
        print(f"mcpkit run: {exc}", file=sys.stderr)
        return 2
    try:
        from mcpkit.transports.http import run_http
    except ImportError as exc:
        print(
            f"mcpkit run: --http needs the http extra (pip install 'mcpkit[http]'): {exc}",
            file=sys.stderr,
        )
        return 2
    print(f"mcpkit: serving {target} at http://{host}:{port}{path}", file=sys.stderr)
    run_http(server, host=host, port=port, path=path)
    return 0


def _run(target: str) -> int:
    with protected_stdout() as wire:
        try:
            server = load_server(target)
        except UsageError as exc:
            print(f"mcpkit run: {exc}", file=sys.stderr)
            return 2
        run_stdio(server, stdout_fd=wire, protect_stdout=False)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpkit", description="Model Context Protocol tools")
    commands = parser.add_subparsers(dest="command", required=True)
    call = commands.add_parser(
        "call",
        help="call one tool on a stdio or Streamable HTTP server",
        usage="mcpkit call TOOL [key=value ...] (-- COMMAND ... | --url URL [--oauth])",
    )
    call.add_argument("tool")
    call.add_argument("assignments", nargs="*", metavar="key=value")
    call.add_argument("--json", action="store_true", help="print the raw result as JSON")
    call.add_argument("--url", help="a Streamable HTTP endpoint instead of a stdio command")
    call.add_argument("--oauth", action="store_true", help="sign in with OAuth when asked")
    call.add_argument("--token-file", help="keep OAuth tokens in this file (mode 0600)")
    run = commands.add_parser(
        "run", help="serve a Server defined in a Python file over stdio or Streamable HTTP"
    )
    run.add_argument("target", metavar="FILE[:NAME]")
    run.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    run.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    run.add_argument("--path", default="/mcp", help="HTTP endpoint path (default /mcp)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    own, command = _split_command(args_list)
    args = _parser().parse_args(own)
    if args.command == "call":
        if bool(command) == (args.url is not None):
            print(
                "mcpkit call: give the server command after --, or --url URL (one of the two)",
                file=sys.stderr,
            )
            return 2
        if args.url is None and (args.oauth or args.token_file):
            print("mcpkit call: --oauth and --token-file go with --url", file=sys.stderr)
            return 2
        if args.token_file and not args.oauth:
            print("mcpkit call: --token-file goes with --oauth", file=sys.stderr)
            return 2
        try:
            arguments = parse_assignments(args.assignments)
        except UsageError as exc:
            print(f"mcpkit call: {exc}", file=sys.stderr)
            return 2
        try:
            return asyncio.run(_call(args.tool, arguments, command, args))
        except KeyboardInterrupt:
            # asyncio.run cancelled the call, so the server was already shut down.
            print("mcpkit call: interrupted", file=sys.stderr)
            return 130
        except ProtocolError as exc:
            print(f"mcpkit call: error {exc.effective_code}: {exc.message}", file=sys.stderr)
            return 2
        except (MCPError, OSError) as exc:
            print(f"mcpkit call: {exc}", file=sys.stderr)
            return 2
    if args.command == "run":
        if args.http:
            return _run_http(args.target, args.host, args.port, args.path)
        return _run(args.target)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
