"""A live memoryhub for the MCP tests, and the official `mcp` Python client to talk to its /mcp endpoint.

The server is a uvicorn process (with a qcluster worker, for extraction) on the test database, as in
tests/clients: tests that use `live_mcp` must be `@pytest.mark.django_db(transaction=True)`, since those
processes see only committed rows. Create tenants and keys with the usual fixtures (`tenant_a.keys["write"]`
is a raw key of tenant acme, whose store is "main").
"""

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from apps.extraction.models import ExtractionJob
from tests.processes import LiveProcesses, server_and_worker, wait_for


class LiveMcp(LiveProcesses):
    """The running server and worker, and the official MCP client over real HTTP."""

    @property
    def url(self) -> str:
        return f"{self.server.base_url}/mcp"

    @asynccontextmanager
    async def session(self, api_key: str, *, responses: list | None = None) -> AsyncIterator[ClientSession]:
        """An initialized ClientSession that sends `api_key` as its bearer token; each HTTP response it gets is
        appended to `responses`, when given, so a test can see the status codes behind a failure."""

        async def record(response: httpx2.Response) -> None:
            if responses is not None:
                responses.append(response)

        headers = {"Authorization": f"Bearer {api_key}"}
        async with (
            httpx2.AsyncClient(headers=headers, event_hooks={"response": [record]}) as http,
            streamable_http_client(self.url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session

    def call(self, api_key: str, tool: str, **arguments) -> CallToolResult:
        """Call one tool in a session of its own (the server keeps no state between requests anyway)."""

        async def main() -> CallToolResult:
            async with self.session(api_key) as session:
                return await session.call_tool(tool, arguments)

        return asyncio.run(main())

    def rest(self, api_key: str) -> httpx.Client:
        """A plain HTTP client for the REST API, to read back what a tool did."""
        return httpx.Client(base_url=f"{self.server.base_url}/api/v1",
                            headers={"Authorization": f"Bearer {api_key}"}, timeout=30)


def ok(result: CallToolResult) -> dict:
    """The structured result of a call that must have succeeded."""
    assert not result.is_error, result.content[0].text
    return result.structured_content


def refusal(result: CallToolResult) -> str:
    """The text of a call that must have been refused as a tool error."""
    assert result.is_error, result.structured_content
    [content] = result.content
    return content.text


@pytest.fixture(scope="module")
def live_mcp(django_db_setup, tmp_path_factory) -> Iterator[LiveMcp]:
    with server_and_worker(tmp_path_factory.mktemp("memoryhub-mcp")) as processes:
        yield LiveMcp(*processes)


@pytest.fixture(autouse=True)
def _jobs_finished_before_the_tables_are_emptied(request):
    yield
    if "live_mcp" in request.fixturenames:
        # A job the worker is still running holds row locks that would deadlock the TRUNCATE.
        wait_for(lambda: not ExtractionJob.objects.filter(status__in=ExtractionJob.OPEN_STATUSES).exists(),
                 timeout=60, what="the worker to finish its extraction jobs")
