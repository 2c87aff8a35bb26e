"""Start an MCP server command the way a desktop client does (stdio) and check it works.

    python scripts/stdio_smoke.py COMMAND [ARG...]

Runs with any Python that has the `mcp` SDK (the installed package's own environment will do).
Serves one page on 127.0.0.1, then over the server's stdio: initialize, tools/list (web_search
and web_fetch), and a web_fetch of that page, whose text must come back. Nothing leaves the
machine: the page is on loopback and the server is allowed to reach 127.0.0.1 only.
"""

from __future__ import annotations

import http.server
import logging
import os
import sys
import threading

import anyio
from mcp import Client, StdioServerParameters

logger = logging.getLogger("stdio_smoke")
PAGE = (
    b"<html><head><title>Smoke</title></head><body><article><h1>Smoke test</h1>"
    b"<p>The installed server read this page over loopback.</p></article></body></html>"
)
EXPECTED_TOOLS = {"web_search", "web_fetch"}


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        found = self.path == "/page"
        body = PAGE if found else b"not found"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8" if found else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        logger.debug(format, *args)


async def smoke(command: str, args: list[str], url: str) -> None:
    env = {**os.environ, "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32", "MCP_WEB_LOG_LEVEL": "warning"}
    params = StdioServerParameters(command=command, args=args, env=env)
    with anyio.fail_after(180):  # uvx may install the package's dependencies first
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            if names != EXPECTED_TOOLS:
                raise SystemExit(f"tools/list gave {sorted(names)}, expected {sorted(EXPECTED_TOOLS)}")
            result = await client.call_tool("web_fetch", {"url": url})
    text = "".join(getattr(block, "text", "") for block in result.content)
    if result.is_error or "read this page over loopback" not in text:
        raise SystemExit(f"web_fetch did not return the page: {text[:500]}")


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="stdio_smoke: %(message)s")
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/page"
        anyio.run(smoke, sys.argv[1], sys.argv[2:], url)
    finally:
        server.shutdown()
    logger.info("ok: %s started over stdio, listed its tools and fetched a page", " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
