from __future__ import annotations

import json

from mcp_server_web.fetch.doc.embedded import (
    PageScripts,
    ShellReport,
    inspect_shell,
    recover_embedded_text,
)
from mcp_server_web.fetch.doc.extract import extract_html
from tests.support.samples import article_html, json_ld_shell, next_data_shell


def parse(page: str) -> PageScripts:
    scripts = extract_html(page, "https://example.com/", output_format="text", main_content=True).scripts
    assert scripts is not None
    return scripts


def shell(page: str) -> ShellReport:
    result = extract_html(page, "https://example.com/", output_format="text", main_content=True)
    assert result.scripts is not None
    return inspect_shell(result.scripts, result.visible_chars)


def test_shells_are_recognised_and_articles_are_not() -> None:
    assert shell(next_data_shell()).is_shell
    report = shell(json_ld_shell())
    assert report.is_shell and report.mount_point and report.script_chars > 1000
    assert not shell(article_html()).is_shell
    # Little text but no mount point and no heavy script: a short page, not a shell.
    assert not shell("<html><body><p>Short note.</p></body></html>").is_shell


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
