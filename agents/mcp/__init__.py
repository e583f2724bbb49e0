"""MCP servers as tools (the `mcp` extra: `pip install 'paor[mcp]'`).

```python
from agents.mcp import MCPServer, MCPServers

async with MCPServer.stdio("time", "mcp-server-time") as time:
    result = await Orchestrator(model, time.tools).run("What time is it in Tokyo?")

async with MCPServers.from_file("mcp.json") as servers:  # Claude Desktop's format
    result = await Orchestrator(model, [*my_tools, *servers.tools]).run(goal)
```

`tools_of(path)` is the short form of the second: the tools of the file's servers while its block
runs, and none for a path of None (an option left unset).
"""

from agents.mcp._mcp import MCPServer, MCPTool
from agents.mcp._mcp_config import MCPServers, tools_of

__all__ = ["MCPServer", "MCPServers", "MCPTool", "tools_of"]
