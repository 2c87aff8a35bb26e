"""The machine's redis-server and haproxy, found for the tests that run the real thing.

Without one those tests skip, unless MCP_WEB_REQUIRE_SERVICES=1 (CI sets it, having run
scripts/install-services): there a missing binary is a failure, never a silent skip.

Standard library only at import time (pytest is imported when needed), like the helpers that use
it: scripts/compose-smoke imports them with the system python3.
"""

from __future__ import annotations

import os
import shutil

# Debian puts haproxy in /usr/sbin, which an ordinary user's PATH may not have.
_SYSTEM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def find_service(name: str) -> str | None:
    """The path of an executable ``name`` on PATH or in the system directories; None if absent."""
    path = os.pathsep.join([os.environ.get("PATH", ""), *_SYSTEM_DIRS])
    return shutil.which(name, path=path)


def service_or_skip(name: str) -> str:
    import pytest

    found = find_service(name)
    if found is None:
        message = f"no {name} on this machine: see scripts/install-services"
        if os.environ.get("MCP_WEB_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found
