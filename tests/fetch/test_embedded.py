from __future__ import annotations

import json

import lxml.html

from mcp_server_web.fetch.embedded import inspect_shell, recover_embedded_text
from tests.support.samples import article_html, json_ld_shell, next_data_shell


def parse(page: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(page)


def test_shells_are_recognised_and_articles_are_not() -> None:
    assert inspect_shell(parse(next_data_shell())).is_shell
    report = inspect_shell(parse(json_ld_shell()))
    assert report.is_shell and report.mount_point and report.script_chars > 1000
    assert not inspect_shell(parse(article_html())).is_shell
    # Little text but no mount point and no heavy script: a short page, not a shell.
    assert not inspect_shell(parse("<html><body><p>Short note.</p></body></html>")).is_shell


def test_recovers_prose_in_order_from_hydration_data() -> None:
    recovered = recover_embedded_text(parse(next_data_shell()))
    assert recovered is not None and recovered.source == "__NEXT_DATA__"
    assert recovered.title == "Glaciers Carve Valleys"
    first, second = recovered.text.split("\n\n")
    assert first.startswith("Glaciers move slowly") and second.startswith("When the ice retreats")
    assert "<p>" not in recovered.text


def test_ignores_data_that_is_not_prose() -> None:
    blob = {"props": {"token": "x" * 400, "urls": ["https://cdn.example.com/" + "a" * 300], "body": "ok"}}
    page = f'<html><body><div id="root"></div><script id="__NEXT_DATA__" type="application/json">{json.dumps(blob)}</script></body></html>'  # noqa: E501
    assert recover_embedded_text(parse(page)) is None


def test_pathologically_deep_json_does_not_crash() -> None:
    deep = '{"child": ' * 5000 + '{"text": "leaf"}' + "}" * 5000
    page = f'<html><body><script id="__NEXT_DATA__" type="application/json">{deep}</script></body></html>'
    assert recover_embedded_text(parse(page)) is None
