"""The demo session ``make run`` runs: a client drives ``notes_server.py`` over stdio.

It prints the server's discovery, its tool list, one successful call and one failing
call, exactly as they came back.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mcpkit import Client

SERVER = Path(__file__).with_name("notes_server.py")


def show(title: str, value: Any) -> None:
    print(f"== {title}")
    print(json.dumps(value, indent=2, ensure_ascii=False))
    print()


async def main() -> None:
    async with Client.stdio([sys.executable, str(SERVER)], name="notes-demo") as client:
        show("server/discover", await client.discover())
        show("tools/list", await client.list_tools())
        ok = await client.call_tool("read_note", {"title": "standup"})
        show("tools/call read_note(title='standup')", ok.raw)
        failed = await client.call_tool("read_note", {"title": "stand-up"})
        show("tools/call read_note(title='stand-up')", failed.raw)


if __name__ == "__main__":
    asyncio.run(main())
