"""Refusals by bot protection (a 401/403/429 with a vendor's marks) told apart from ordinary
error statuses and an application's own refusals: only the former may go to a third party."""

from __future__ import annotations

import pytest

from mcp_server_web.fetch.doc.challenge import bot_protection
from mcp_server_web.fetch.types import FetchResponse
from tests.support.responses import response

DENIED = (
    "<html><body><h1>Access Denied</h1><p>You don't have permission. Reference #18.2f4c1d17.1732</p>"
    "</body></html>"
)
RAY = "8c1f2e3d4b5a6978-AMS"
CLOUDFLARE_1020 = (
    "<html><head><link rel='stylesheet' href='/cdn-cgi/styles/cf.errors.css'></head><body>"
    "<div id='cf-error-details'>Access denied. Error 1020. Cloudflare Ray ID: 8c1f2e3d4b5a6978</div>"
    "</body></html>"
)


@pytest.mark.parametrize(
    ("resp", "vendor"),
    [
        (response(CLOUDFLARE_1020, status=403, headers={"cf-ray": RAY, "server": "cf"}), "Cloudflare"),
        (response("", status=403, headers={"cf-mitigated": "block"}), "Cloudflare"),
        (response(DENIED, status=403, headers={"server": "AkamaiGHost"}), "Akamai"),
        (response("{}", "application/json", status=403, headers={"x-px-blocked": "1"}), "PerimeterX/HUMAN"),
        (response("blocked", status=403, headers={"set-cookie": "_px3=abc; path=/"}), "PerimeterX/HUMAN"),
        (response("blocked", status=401, headers={"x-datadome": "protected"}), "DataDome"),
        (response("blocked", status=403, headers={"x-iinfo": "9-123-0 0NNN RT(1 2)"}), "Imperva/Incapsula"),
        (response("blocked", status=403, headers={"set-cookie": "visid_incap_123=abc"}), "Imperva/Incapsula"),
        (response("blocked", status=429, headers={"x-amzn-waf-action": "block"}), "AWS WAF"),
    ],
)  # fmt: skip
def test_vendor_refusals_are_recognised(resp: FetchResponse, vendor: str) -> None:
    assert bot_protection(resp) == vendor


@pytest.mark.parametrize(
    "resp",
    [
        response("<html><body>Not found</body></html>", status=404, headers={"server": "AkamaiGHost"}),
        # An application's own 403 behind Cloudflare: cf-ray on every answer, no refusal page.
        response("<html><body>Log in first</body></html>", status=403,
                 headers={"cf-ray": RAY, "server": "cloudflare"}),
        response("{\"error\": \"forbidden\"}", "application/json", status=403, headers={"server": "nginx"}),
        response("Too many requests", "text/plain", status=429, headers={"retry-after": "5"}),
        response(DENIED, status=200, headers={"server": "AkamaiGHost"}),
        response("<html><body>Server error</body></html>", status=503, headers={"x-iinfo": "1"}),
    ],
)  # fmt: skip
def test_ordinary_refusals_are_not_bot_protection(resp: FetchResponse) -> None:
    assert bot_protection(resp) is None
