"""A tiny notes server: one tool, ``read_note``, over stdio.

Run it with ``python examples/notes_server.py``; ``make run`` drives it with
``examples/notes_client.py``.
"""

from __future__ import annotations

from mcpkit import Server, ToolError

NOTES = {
    "standup": "Demo the MCP server at 10:00.",
    "todo": "Review the practice fixes.",
}

server = Server("notes", "1.0.0", instructions="Read short notes by their title.")


@server.tool(annotations={"readOnlyHint": True})
def read_note(title: str) -> str:
    """Read one note by its title.

    Args:
        title: The note's title, e.g. "standup".
    """
    try:
        return NOTES[title]
    except KeyError:
        raise ToolError(f"No note called {title!r}. Notes: {sorted(NOTES)}") from None


if __name__ == "__main__":
    server.run()
