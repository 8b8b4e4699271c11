"""`memext mcp` (engine/faces/cli/mcp_command.py): its help names every
tool and the prompt the real server process serves, as the mcp SDK's
client lists them."""

from __future__ import annotations

import sys

import anyio
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_process import server_env
from memext_helpers import write_config

from memext.cli import cli
from memext.engine import TOOLS


def test_the_help_names_every_tool_and_prompt_the_server_serves(example_workspace, tmp_path):
    config = write_config(tmp_path / "cfg", {"example": example_workspace})

    async def served():
        params = StdioServerParameters(command=sys.executable, args=["-m", "memext", "mcp"], env=server_env(config))
        async with Client(params) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            prompts = {p.name: [a.name for a in p.arguments or []] for p in (await client.list_prompts()).prompts}
            return tools, prompts

    tools, prompts = anyio.run(served)
    assert tools == [t.name for t in TOOLS] and prompts == {"recall": ["message"]}
    helped = " ".join(CliRunner().invoke(cli, ["mcp", "--help"]).output.split())
    assert [name for name in [*tools, *prompts, *prompts["recall"]] if name not in helped] == []
    listed = next(line for line in CliRunner().invoke(cli, ["--help"]).output.splitlines() if line.strip().startswith("mcp "))
    assert "memory_* tools and the recall prompt" in listed
