from __future__ import annotations

from dataclasses import fields
from ipaddress import ip_network

import pytest

from mcp_server_web.config import (
    OPTIONS_BY_ATTR,
    ConfigError,
    Option,
    Settings,
    check_exposure,
    load_settings,
)


def test_defaults_match_the_contract() -> None:
    settings = load_settings({}, {})
    assert settings.transport == "stdio" and settings.host == "127.0.0.1" and settings.port == 8000
    assert settings.path == "/mcp" and settings.tools == ("web_search", "web_fetch")
    assert settings.timeout == 30 and settings.max_response_mb == 10
    assert settings.cache_ttl == 900 and settings.cache_max_mb == 128
    assert settings.respect_robots is True and settings.allow_private is False
    assert settings.user_agent.startswith("mcp-server-web/")


def test_environment_is_read_and_flags_win() -> None:
    env = {
        "MCP_WEB_PORT": "9000",
        "MCP_WEB_ALLOW_CIDRS": "10.1.0.0/16, 198.18.0.0/15",
        "MCP_WEB_TIMEOUT": "7.5",
    }
    settings = load_settings({"port": "9100"}, env)
    assert settings.port == 9100
    assert settings.allow_cidrs == (ip_network("10.1.0.0/16"), ip_network("198.18.0.0/15"))
    assert settings.timeout == 7.5


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"MCP_WEB_TRANSPORT": "carrier-pigeon"}, "expected one of stdio, http"),
        ({"MCP_WEB_ALLOW_PRIVATE": "maybe"}, "expected true or false"),
        ({"MCP_WEB_ALLOW_CIDRS": "not-a-net"}, "is not an IP network"),
        ({"MCP_WEB_TOOLS": "web_fetch,teleport"}, "unknown name(s) teleport"),
        ({"MCP_WEB_PORT": "70000"}, "from 0 to 65535"),
        ({"MCP_WEB_MAX_RESPONSE_MB": "-1"}, "positive"),
        ({"MCP_WEB_PATH": "mcp"}, "must start with '/'"),
    ],
)
def test_bad_values_name_the_setting(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({}, env)
    assert fragment in str(caught.value)
    assert next(iter(env)) in str(caught.value)


def test_secrets_from_files_are_masked(tmp_path: object) -> None:
    from pathlib import Path

    secret = Path(str(tmp_path)) / "brave_key"
    secret.write_text("brave-secret-value\n")
    settings = load_settings({}, {"BRAVE_API_KEY_FILE": str(secret), "TAVILY_API_KEY": "tvly-secret"})
    assert settings.provider_key("brave") == "brave-secret-value"
    assert settings.provider_key("tavily") == "tvly-secret"
    described = settings.describe()
    assert described["BRAVE_API_KEY"] == "***" and described["TAVILY_API_KEY"] == "***"
    assert "secret" not in repr(settings)


def test_unreadable_secret_file_is_a_clear_error() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({}, {"EXA_API_KEY_FILE": "/nonexistent/exa"})
    assert "EXA_API_KEY_FILE" in str(caught.value)


def test_http_off_loopback_needs_a_token_or_a_loud_opt_out() -> None:
    remote = {"transport": "http", "host": "0.0.0.0"}
    with pytest.raises(ConfigError) as caught:
        check_exposure(load_settings(remote, {}))
    assert "MCP_WEB_AUTH_TOKEN" in str(caught.value)
    check_exposure(load_settings(remote, {"MCP_WEB_AUTH_TOKEN": "t"}))
    check_exposure(load_settings(remote, {"MCP_WEB_ALLOW_UNAUTHENTICATED_REMOTE": "true"}))
    check_exposure(load_settings({"transport": "http", "host": "::1"}, {}))
    check_exposure(load_settings({"host": "0.0.0.0"}, {}))  # stdio: the host is not used


NUMERIC = [
    OPTIONS_BY_ATTR[field.name]
    for field in fields(Settings)
    if field.type in ("int", "float", "int | None") and field.name in OPTIONS_BY_ATTR
]
NOT_NUMBERS = ("nan", "NaN", "-nan", "+NAN", "inf", "INF", "+inf", "-inf", "Infinity", "-infinity", "1e999")


def test_every_numeric_setting_is_covered() -> None:
    # The timeouts, sizes, counts and the port: the list above is read from Settings' types.
    assert {"timeout", "port", "max_concurrency", "search_deadline", "conversion_max_mb"} <= {
        option.attr for option in NUMERIC
    }


@pytest.mark.parametrize("option", NUMERIC, ids=lambda option: option.attr)
def test_nan_and_infinity_are_refused_from_flags_and_environment(option: Option) -> None:
    for raw in NOT_NUMBERS:
        with pytest.raises(ConfigError) as from_env:
            load_settings({}, {option.env: raw})
        assert str(from_env.value).startswith(f"{option.env}: ")
        assert repr(raw) in str(from_env.value) and "expected" in str(from_env.value)
        with pytest.raises(ConfigError) as from_flag:
            load_settings({option.attr: raw}, {})
        assert str(from_flag.value).startswith(f"{option.cli_flag}: ")
    # Ordinary values still go through.
    assert load_settings({}, {option.env: "8"}).value(option) == 8
