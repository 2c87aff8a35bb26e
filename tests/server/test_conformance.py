"""The official MCP conformance suite (@modelcontextprotocol/conformance) against the HTTP service.

The suite is a Node program, pinned with the Node.js 22 it needs and installed into .conformance/
by scripts/install-conformance; without it (no npm on this machine) these tests are skipped. Two
pinned versions run: the current release, and its pre-release, which alone has the scenarios of
the 2026-07-28 protocol (server/discover, stateless requests, Mcp-Method headers, caching hints)
that the SDK speaks by default.

Many scenarios are written against the suite's own fixture server (the "everything server"): they
call tools and prompts named test_*, or exercise features a server may leave out. Every scenario a
version lists is classified below: those that apply to this server (its two tools, its fetch
prompt, no resources, no logging, stateless HTTP) must pass, check by check; the others are listed
with the reason they do not apply. A new scenario in a new version fails
test_every_scenario_is_classified until someone decides which it is.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.http_server import RunningServer, running_http_server

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / ".conformance" / "node_modules"
NODE = MODULES / ".bin" / "node"
SUITES = {
    "0.1.16": MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js",
    "0.2.0-alpha.12": MODULES / "conformance-next" / "dist" / "index.js",
}
"""Each pinned version of the suite (.conformance/package.json) and its command-line entry."""
SCENARIO_TIMEOUT = 120.0
# Every request here goes to 127.0.0.1; a proxy from the environment could only get in the way.
PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
PASSING = {"SUCCESS", "INFO", "SKIPPED"}
"""Check statuses that are not a failure. WARNING (a SHOULD not met) counts as one here."""

pytestmark = [
    pytest.mark.skipif(
        not NODE.exists() or not all(entry.exists() for entry in SUITES.values()),
        reason=f"MCP conformance suite not installed ({MODULES} is incomplete): "
        "run scripts/install-conformance",
    ),
]

FIXTURE_TOOL = "calls a diagnostic tool of the suite's fixture server that a real server does not have"
NO_RESOURCE_CHECK = "checks resources/list or resources/templates/list: the server has no resources"

APPLIES: dict[str, dict[str, dict[str, str]]] = {
    "0.1.16": {
        "server-initialize": {},
        "ping": {},
        "tools-list": {},
        "prompts-list": {},
        "dns-rebinding-protection": {},
    },
    "0.2.0-alpha.12": {
        "server-initialize": {},
        "ping": {},
        "tools-list": {},
        "prompts-list": {},
        "dns-rebinding-protection": {},
        # The 2026-07-28 protocol: _meta on every request, server/discover, unsupported versions,
        # Method not found for what is not served, and capabilities that match the handlers.
        "server-stateless": {
            "sep-2575-server-rejects-undeclared-capability": FIXTURE_TOOL + " (test_missing_capability)",
            "sep-2575-missing-capability-http-400": FIXTURE_TOOL + " (test_missing_capability)",
        },
        "http-header-validation": {},
        "caching": {
            "sep-2549-resources-list-caching-hints": NO_RESOURCE_CHECK,
            "sep-2549-resources-templates-list-caching-hints": NO_RESOURCE_CHECK,
        },
    },
}
"""Per version, the scenarios that apply, each with the checks in it that do not (and why)."""

NOT_APPLICABLE: dict[str, tuple[str, ...]] = {
    "they call the fixture server's own test_* tools and prompts (or, for the custom-header one, a "
    "tool with x-mcp-header parameters), which a real server does not have; this server's tools and "
    "its fetch prompt are tested in tests/server/. tools-call-simple-text and tools-call-error "
    "'pass' here only because calling an unknown tool answers isError with a text": (
        "tools-call-simple-text",
        "tools-call-error",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-with-progress",
        "json-schema-2020-12",
        "prompts-get-simple",
        "prompts-get-with-args",
        "prompts-get-embedded-resource",
        "prompts-get-with-image",
        "server-sse-polling",
        "http-custom-header-server-validation",
    ),
    "the server declares no logging capability: it logs to its own stderr and sends no log notifications": (
        "logging-set-level",
        "tools-call-with-logging",
    ),
    "the server declares no completions capability: the fetch prompt's url has nothing to complete": (
        "completion-complete",
    ),
    "the server has no resources and declares no resources capability": (
        "resources-list",
        "resources-read-text",
        "resources-read-binary",
        "resources-templates-read",
        "resources-subscribe",
        "resources-unsubscribe",
        "sep-2164-resource-not-found",
    ),
    "the server never asks the client for anything (sampling, elicitation, roots, input-required "
    "results): its tools need nothing from the client": (
        "tools-call-sampling",
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
        "input-required-result-basic-elicitation",
        "input-required-result-basic-sampling",
        "input-required-result-basic-list-roots",
        "input-required-result-request-state",
        "input-required-result-multiple-input-requests",
        "input-required-result-multi-round",
        "input-required-result-missing-input-response",
        "input-required-result-non-tool-request",
        "input-required-result-result-type",
        "input-required-result-unsupported-methods",
        "input-required-result-tampered-state",
        "input-required-result-capability-check",
        "input-required-result-ignore-extra-params",
        "input-required-result-validate-input",
    ),
    "they need an MCP session (Mcp-Session-Id); the HTTP service is stateless by design, so any "
    "replica answers any request (the scenarios only record that there is no session)": (
        "server-sse-multiple-streams",
        "server-session-lifecycle",
    ),
    "optional extensions (tasks, skills) the server does not declare": (
        "tasks-lifecycle",
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-state-removal",
        "tasks-mrtr-input",
        "tasks-request-headers",
        "tasks-dispatch-and-envelope",
        "tasks-status-notifications",
        "tasks-required-task-error",
        "tasks-mrtr-composition",
        "sep-2640-skills-directory",
        "sep-2640-skills-enumeration",
        "sep-2640-skills-manifest",
    ),
}
"""Reason -> the scenarios (of any pinned version) that do not apply to this server, for it."""


@pytest.fixture(scope="module")
def served() -> Iterator[RunningServer]:
    # On loopback without a token, as `make run` serves: the suite sends no Authorization header,
    # and its DNS-rebinding scenario is about exactly such a server.
    with running_http_server() as server:
        yield server


def conformance(version: str, *args: str, workdir: Path) -> str:
    """Run one version of the suite's command line; its standard output."""
    env = {key: value for key, value in os.environ.items() if key.lower() not in PROXY_VARIABLES}
    command = [str(NODE), str(SUITES[version]), *args]
    # A session of its own, so a timeout can end the suite and anything it started.
    process = subprocess.Popen(
        command,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=SCENARIO_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"conformance took over {SCENARIO_TIMEOUT:.0f} s: {command}") from None
    return output


def run_scenario(version: str, scenario: str, url: str, workdir: Path) -> list[dict[str, Any]]:
    """Every check the scenario recorded. (The exit status is not used: it is 1 whenever any check
    fails, including the ones that do not apply.)"""
    results = workdir / "results"
    arguments = ["server", "--url", url, "--scenario", scenario, "-o", str(results)]
    output = conformance(version, *arguments, workdir=workdir)
    files = sorted(results.rglob("checks.json"))
    assert len(files) == 1, f"expected one checks.json, found {files}; output:\n{output[-3000:]}"
    checks = json.loads(files[0].read_text())
    assert isinstance(checks, list) and checks, output[-3000:]
    return checks


def listed_scenarios(version: str, workdir: Path) -> set[str]:
    output = conformance(version, "list", "--server", workdir=workdir)
    names = {line.strip()[2:].split()[0] for line in output.splitlines() if line.strip().startswith("- ")}
    assert names, output
    return names


@pytest.mark.parametrize(
    ("version", "scenario"), [(version, scenario) for version, table in APPLIES.items() for scenario in table]
)
def test_scenario_passes(served: RunningServer, version: str, scenario: str, tmp_path: Path) -> None:
    checks = run_scenario(version, scenario, served.url, tmp_path)
    exempt = APPLIES[version][scenario]
    failed = [
        f"{check['status']} {check['id']}: {check.get('errorMessage') or check.get('description')}"
        for check in checks
        if check["status"] not in PASSING and check["id"] not in exempt
    ]
    assert not failed, "\n".join(failed)
    assert any(check["status"] == "SUCCESS" for check in checks), checks
    # An exemption names a check the scenario still makes; otherwise it is stale and must go.
    assert set(exempt) <= {check["id"] for check in checks}, sorted(set(exempt) - {c["id"] for c in checks})


@pytest.mark.parametrize("version", SUITES)
def test_every_scenario_is_classified(version: str, tmp_path: Path) -> None:
    """Each server scenario of this version either applies (and runs above) or is listed with the
    reason it does not."""
    not_applicable = {scenario for scenarios in NOT_APPLICABLE.values() for scenario in scenarios}
    applies = set(APPLIES[version])
    assert not applies & not_applicable
    listed = listed_scenarios(version, tmp_path)
    assert listed - applies - not_applicable == set(), "classify these scenarios"
    assert applies <= listed


@pytest.mark.parametrize("version", SUITES)
def test_installed_versions_are_the_pinned_ones(version: str, tmp_path: Path) -> None:
    assert conformance(version, "--version", workdir=tmp_path).strip() == version
    node = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout
    assert node.startswith("v22."), node
