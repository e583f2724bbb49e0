"""MCP servers as tools (the `mcp` extra: `pip install 'paor[mcp]'`).

```python
from agents.mcp import MCPServer, MCPServers

async with MCPServer.stdio("time", "mcp-server-time") as time:
    result = await Orchestrator(model, time.tools).run("What time is it in Tokyo?")

async with MCPServers.from_file("mcp.json") as servers:  # Claude Desktop's format
    result = await Orchestrator(model, [*my_tools, *servers.tools]).run(goal)
```

`MCPServers.from_file(path, within=S)` starts them all within S seconds (what is left of a run's
deadline), on top of each server's own `start_timeout`.
"""

from agents.mcp._mcp import MCPServer, MCPTool
from agents.mcp._mcp_config import MCPServers

__all__ = ["MCPServer", "MCPServers", "MCPTool"]
