"""The "everything" server: every fixture the MCP conformance suite asks a server for.

Run it over stdio with ``python examples/everything_server.py --stdio``, or over
Streamable HTTP with ``python examples/everything_server.py --port 3001`` (``--host``
defaults to 127.0.0.1). It is dual-era: modern clients (2026-07-28) and legacy ones
(an ``initialize`` handshake, 2025-11-25 back to 2024-11-05) are served by the same
process, over HTTP on the same ``/mcp`` endpoint, and the deprecated HTTP+SSE transport
of 2024-11-05 answers beside it at ``/sse``. Fixture names and shapes follow
``conformance.md`` §6.3-6.5:
content tools, progress and logging tools, input-required (multi round-trip) tools,
the server-stateless diagnostics, static and templated resources, prompts and a
completion. Unknown tools are still -32602, as the spec says.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from typing import Annotated, Any

from mcpkit import Context, Server, ToolError, content
from mcpkit.server import Header

TEST_IMAGE_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg"
    "=="
)
TEST_AUDIO_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {
        "properties": {"contactMethod": {"const": "phone"}},
        "required": ["contactMethod"],
    },
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def build_server() -> Server:
    """A fresh server with the whole fixture catalogue registered."""
    server = Server(
        "mcpkit-everything",
        "1.0.0",
        instructions="Conformance fixtures: every tool, resource and prompt the suite probes.",
    )
    _content_tools(server)
    _context_tools(server)
    _input_required_tools(server)
    _diagnostic_tools(server)
    _resources(server)
    _prompts(server)
    return server


def _content_tools(server: Server) -> None:
    @server.tool
    def test_simple_text() -> str:
        """Returns a simple text response."""
        return "This is a simple text response for testing."

    @server.tool
    def test_image_content() -> content.Content:
        """Returns a 1x1 PNG image."""
        return content.image(TEST_IMAGE_BASE64, "image/png")

    @server.tool
    def test_audio_content() -> content.Content:
        """Returns a short WAV clip."""
        return content.audio(TEST_AUDIO_BASE64, "audio/wav")

    @server.tool
    def test_embedded_resource() -> content.Content:
        """Returns an embedded text resource."""
        return content.embedded_resource(
            "test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )

    @server.tool
    def test_multiple_content_types() -> list[content.Content]:
        """Returns text, an image and an embedded resource together."""
        return [
            content.text("Multiple content types test:"),
            content.image(TEST_IMAGE_BASE64, "image/png"),
            content.embedded_resource(
                "test://mixed-content-resource",
                text='{"test":"data","value":123}',
                mime_type="application/json",
            ),
        ]

    @server.tool
    def test_error_handling() -> str:
        """Always fails with a tool error (a result with isError, not a protocol error)."""
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool(input_schema=JSON_SCHEMA_2020_12)
    def json_schema_2020_12_tool(**arguments: Any) -> str:
        """Tool with JSON Schema 2020-12 features"""
        return f"received {sorted(arguments)}"

    @server.tool
    def test_x_mcp_header(
        region: Annotated[str, Header("Region"), "The region to run in"],
        query: Annotated[str, "The query to run"] = "",
    ) -> str:
        """Mirrors its region argument into the Mcp-Param-Region header over HTTP."""
        return f"region={region}"

    @server.tool
    async def test_reconnection() -> str:
        """Takes a moment, then answers (the legacy HTTP transport resumes it)."""
        await asyncio.sleep(0.1)
        return "Reconnection test completed"


def _context_tools(server: Server) -> None:
    @server.tool
    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports progress 0, 50 and 100 of 100 (with the request's progressToken)."""
        for step, progress in enumerate((0, 50, 100)):
            if step:
                await asyncio.sleep(0.05)
            await ctx.report_progress(progress, 100, f"Completed step {step + 1} of 3")
        return f"Progress test completed with {3} steps"

    async def three_log_lines(ctx: Context) -> None:
        for index, line in enumerate(
            ("Tool execution started", "Tool processing data", "Tool execution completed")
        ):
            if index:
                await asyncio.sleep(0.05)
            await ctx.info(line)

    @server.tool
    async def test_tool_with_logging(ctx: Context) -> str:
        """Logs three info messages (sent only when the request sets a logLevel)."""
        await three_log_lines(ctx)
        return "Logging test completed"

    @server.tool
    async def test_logging_tool(ctx: Context) -> str:
        """Logs through the request-scoped channel: nothing is sent without a logLevel."""
        await three_log_lines(ctx)
        return "Logged only where the request asked for it"

    @server.tool
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Asks the client's model to answer ``prompt``."""
        reply = await ctx.sample(prompt, max_tokens=100)
        return f"LLM response: {reply.text}"

    @server.tool
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Asks the user ``message`` and reports the answer."""
        schema = {
            "type": "object",
            "properties": {"response": {"type": "string"}},
            "required": ["response"],
        }
        answer = await ctx.elicit(message, schema)
        return f"User response: action={answer.action}, content={answer.content}"

    @server.tool
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Asks for a form whose fields all carry defaults (SEP-1034)."""
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {
                    "type": "string",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "default": True},
            },
        }
        answer = await ctx.elicit("Please review and update the form fields", schema)
        return f"Elicitation completed: action={answer.action}, content={answer.content}"

    @server.tool
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Asks for a form with every enum variant (SEP-1330)."""
        options = ["option1", "option2", "option3"]
        titled = [{"const": value, "title": value.title()} for value in options]
        schema = {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": options},
                "titledSingle": {"type": "string", "oneOf": titled},
                "legacyEnum": {
                    "type": "string",
                    "enum": options,
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
                "titledMulti": {"type": "array", "items": {"anyOf": titled}},
            },
        }
        answer = await ctx.elicit("Please choose", schema)
        return f"Elicitation completed: action={answer.action}, content={answer.content}"


def _input_required_tools(server: Server) -> None:
    @server.tool
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks for the user's name through input_required (key user_name)."""
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        name = (answer.content or {}).get("name", "stranger")
        return f"Hello, {name}!"

    @server.tool
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question through input_required."""
        reply = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return f"The model says: {reply.text}"

    @server.tool
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks the client for its roots through input_required."""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(root.uri for root in roots)

    @server.tool
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for confirmation; the retry carries the sealed requestState."""
        answer = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
        return f"state-ok: confirmed={(answer.content or {}).get('ok')}"

    @server.tool
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks for an elicitation, a sample and the roots at once."""
        answer, greeting, roots = await asyncio.gather(
            ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name"),
            ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
            ctx.list_roots(key="client_roots"),
        )
        name = (answer.content or {}).get("name")
        return f"{greeting.text} {name} ({len(roots)} roots)"

    @server.tool
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks two questions in two rounds."""
        first = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
        color_schema = {
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "required": ["color"],
        }
        second = await ctx.elicit("Step 2: What is your favorite color?", color_schema, key="step2")
        name = (first.content or {}).get("name")
        color = (second.content or {}).get("color")
        return f"{name} likes {color}"

    @server.tool
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Asks for confirmation; a tampered requestState on the retry is -32602."""
        answer = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
        return f"confirmed={(answer.content or {}).get('ok')}"

    @server.tool
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only for the kinds of input the client declared it can give."""
        asked: list[str] = []
        if ctx.client_supports("elicitation"):
            await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
            asked.append("elicitation")
        if ctx.client_supports("sampling"):
            await ctx.sample("Say hello", max_tokens=20, key="hello")
            asked.append("sampling")
        if ctx.client_supports("roots"):
            await ctx.list_roots(key="client_roots")
            asked.append("roots")
        return "asked for: " + (", ".join(asked) or "nothing (no input capabilities)")


def _diagnostic_tools(server: Server) -> None:
    @server.tool(requires={"sampling": {}})
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the client's sampling capability: without it the call is -32021."""
        reply = await ctx.sample("Say hello", max_tokens=20, key="hello")
        return f"Client declared sampling; the model said: {reply.text}"

    @server.tool
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Streams progress, then asks its question through input_required."""
        await ctx.report_progress(1, 2, "about to ask")
        answer = await ctx.elicit(
            "The streaming probe asks for a word",
            {"type": "object", "properties": {"word": {"type": "string"}}},
            key="word",
        )
        return f"elicitation {answer.action}"

    @server.tool
    def test_trigger_tool_change() -> str:
        """Adds and removes a tool, so listeners hear tools/list_changed."""

        def test_transient_tool() -> str:
            """Exists only for a moment."""
            return "transient"

        server.add_tool(test_transient_tool)
        server.remove_tool("test_transient_tool")
        return "Tool list changed"

    @server.tool
    def test_trigger_prompt_change() -> str:
        """Adds and removes a prompt, so listeners hear prompts/list_changed."""

        def test_transient_prompt() -> str:
            """Exists only for a moment."""
            return "transient"

        server.add_prompt(test_transient_prompt)
        server.remove_prompt("test_transient_prompt")
        return "Prompt list changed"


def _resources(server: Server) -> None:
    @server.resource("test://static-text", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource."""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", mime_type="image/png")
    def static_binary() -> content.ResourceContents:
        """A static binary resource (a 1x1 PNG)."""
        return content.blob_resource(
            "test://static-binary", TEST_IMAGE_BASE64, mime_type="image/png"
        )

    @server.resource("test://watched-resource", mime_type="text/plain")
    def watched_resource() -> str:
        """A resource clients may subscribe to."""
        return "Watched resource content"

    @server.resource("test://template/{id}/data", mime_type="application/json")
    def template_data(id: str) -> dict[str, Any]:
        """Data for one id."""
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    @server.completion(template="test://template/{id}/data", argument="id")
    def complete_id(value: str) -> list[str]:
        return [candidate for candidate in ("123", "456", "789") if candidate.startswith(value)]


def _prompts(server: Server) -> None:
    @server.prompt
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        return "This is a simple prompt for testing."

    @server.prompt
    def test_prompt_with_arguments(
        arg1: Annotated[str, "First test argument"],
        arg2: Annotated[str, "Second test argument"],
    ) -> str:
        """A prompt with two required arguments."""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.completion(prompt="test_prompt_with_arguments", argument="arg1")
    def complete_arg1(value: str) -> list[str]:
        return [v for v in ("paris", "park", "parallel") if v.startswith(value.lower())]

    @server.prompt
    def test_prompt_with_embedded_resource(
        resourceUri: Annotated[str, "URI of the resource to embed"],
    ) -> list[content.PromptMessage]:
        """A prompt that embeds a resource."""
        return [
            content.user(
                content.embedded_resource(
                    resourceUri,
                    text="Embedded resource content for testing.",
                    mime_type="text/plain",
                )
            ),
            content.user("Please process the embedded resource above."),
        ]

    @server.prompt
    def test_prompt_with_image() -> list[content.PromptMessage]:
        """A prompt that includes an image."""
        return [
            content.user(content.image(TEST_IMAGE_BASE64, "image/png")),
            content.user("Please analyze the image above."),
        ]

    @server.prompt
    async def test_input_required_result_prompt(ctx: Context) -> list[content.PromptMessage]:
        """A prompt that asks the user for context through input_required."""
        answer = await ctx.elicit(
            "What context should the prompt use?",
            {
                "type": "object",
                "properties": {"context": {"type": "string"}},
                "required": ["context"],
            },
            key="user_context",
        )
        context = (answer.content or {}).get("context", "")
        return [content.user(f"Use this context: {context}")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stdio", action="store_true", help="serve over stdin/stdout")
    mode.add_argument("--port", type=int, help="serve Streamable HTTP on this port")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    args = parser.parse_args(argv)
    server = build_server()
    if args.stdio:
        from mcpkit.transports.stdio import run_stdio

        run_stdio(server)
        return 0
    try:
        http = importlib.import_module("mcpkit.transports.http")
        run_http = http.run_http
    except (ImportError, AttributeError) as exc:
        print(f"HTTP serving is not available in this installation: {exc}", file=sys.stderr)
        return 2
    run_http(server, host=args.host, port=args.port, legacy_sse=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
