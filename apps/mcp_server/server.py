"""memoryhub over the Model Context Protocol: one django-mcpz server, a plain Django view at /mcp.

django-mcpz answers MCP's streamable HTTP transport statelessly, one JSON response per POST: the 2026-07-28
revision, and the initialize handshake of the 2025 revisions for older clients. Being a view, it runs in the
same process, middleware, database connections and tests as the REST API; there is no session to keep.
"""

from importlib.metadata import version

from django_mcpz.server import MCPServer

from apps.mcp_server.authentication import api_key_auth
from apps.mcp_server.tools import memories, sessions  # noqa: F401 - imported for the tools they declare
from apps.mcp_server.tools.base import TOOLS

INSTRUCTIONS = (
    "memoryhub is your long-term memory of the people you talk to, and the working memory of your tasks. "
    "The tools take `store`, the memory store to use (list_stores shows them). Before answering, "
    "search_memories (or get_context, which assembles one block for your prompt) with the user's user_id; when "
    "you learn a durable fact or preference, add_memory. Correct a fact that changed with update_memory rather "
    "than adding a second one. Keep the state of a long task in working memory (set_working_memory) and "
    "checkpoint it before risky steps. A refused call says why (a missing scope, a bad argument): read it and "
    "correct the call."
)

server = MCPServer(
    name="memoryhub",
    title="memoryhub",
    version=version("memoryhub"),
    description="Long-term and working memory for AI agents",
    instructions=INSTRUCTIONS,
    auth=api_key_auth,
)

for declared in TOOLS:
    server.tool(
        name=declared.name,
        description=declared.description,
        input_schema=declared.input_schema(),
        read_only=declared.read_only,
        destructive=declared.destructive,
        idempotent=declared.idempotent,
        open_world=False,
    )(declared)
