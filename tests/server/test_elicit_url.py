"""URL-mode elicitation: ``ctx.elicit_url`` (spec ``client/elicitation.mdx`` §URL Mode)."""

from __future__ import annotations

from mcpkit import Context, Server

from .wire import MISSING_CAPABILITY, Direct

URL = "https://example.com/connect?session=abc"


def linking() -> Server:
    server = Server("linking", "1.0.0", state_key="k" * 40)

    @server.tool
    async def connect_account(ctx: Context) -> str:
        """Send the user to a page the client must not see."""
        answer = await ctx.elicit_url("Connect your account", URL, key="link")
        return f"link: {answer.action}"

    return server


async def test_a_url_elicitation_asks_in_url_mode() -> None:
    reply = await Direct(linking()).tool(
        "connect_account", {}, capabilities={"elicitation": {"url": {}}}
    )
    result = reply.result
    assert result["resultType"] == "input_required"
    request = result["inputRequests"]["link"]
    assert request["method"] == "elicitation/create"
    assert request["params"] == {"mode": "url", "message": "Connect your account", "url": URL}


async def test_the_answer_to_a_url_elicitation_completes_the_call() -> None:
    reply = await Direct(linking()).tool(
        "connect_account",
        {},
        capabilities={"elicitation": {"url": {}}},
        extra={"inputResponses": {"link": {"action": "accept"}}},
    )
    assert reply.text == "link: accept"


async def test_a_client_without_url_mode_gets_missing_capability() -> None:
    reply = await Direct(linking()).tool(
        "connect_account", {}, capabilities={"elicitation": {"form": {}}}
    )
    assert reply.error["code"] == MISSING_CAPABILITY
    assert reply.error["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
