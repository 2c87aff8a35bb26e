"""http_request's lenient argument rules (its input model, http_request.py, applies them): headers
and params as an object (or a JSON object in a string), a body or a JSON value; clear errors for
what cannot be used."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlencode

from mcp_server_web.errors import InvalidArgument
from mcp_server_web.fetch import describe_size, parse_url
from mcp_server_web.server.contract.lenient import json_kind, shown

HttpMethod = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
HTTP_METHODS: tuple[HttpMethod, ...] = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
REQUEST_BODY_LIMIT = 1024 * 1024
"""Most request body bytes sent: a model does not write megabytes, and a cap bounds a mistake."""
# RFC 9110 token characters: anything else in a header name is refused by the HTTP stack with
# a less helpful message, or worse, would let a value smuggle a second header.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def _as_object(value: Any, name: str) -> dict[str, Any]:
    """An object argument; a JSON object inside a string is accepted (some clients send that)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        with contextlib.suppress(ValueError, RecursionError):
            value = json.loads(value)
    if not isinstance(value, dict):
        raise InvalidArgument(f"{name} must be an object of names to values, got {json_kind(value)}.")
    return value


def _scalar_text(value: Any) -> str | None:
    """A header or query value as text: JSON booleans as APIs expect them, numbers as written.

    Infinity and NaN are not numbers any API reads (str() would send "inf"), and an int too long
    for str() is no value either: both are refused."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str | int | float):
        try:
            return str(value)
        except ValueError:  # an int of more than 4,300 digits
            return None
    return None


def header_map(value: Any) -> dict[str, str]:
    """Request headers, each name a token and each value one line of ASCII."""
    headers: dict[str, str] = {}
    for name, raw in _as_object(value, "headers").items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            raise InvalidArgument(f"headers: {shown(name)} is not a valid header name.")
        text = _scalar_text(raw)
        if text is None:
            raise InvalidArgument(f"headers: the value of {name} must be a string, not {shown(raw)}.")
        if any((ord(char) < 0x20 and char != "\t") or ord(char) == 0x7F for char in text):
            raise InvalidArgument(f"headers: the value of {name} contains a line break or control character.")
        if not text.isascii():
            raise InvalidArgument(
                f"headers: the value of {name} has non-ASCII characters; percent-encode or "
                "base64-encode them as the API expects."
            )
        headers[name] = text
    return headers


def params_pairs(value: Any) -> list[tuple[str, str]]:
    """Query parameters as pairs; a list value repeats the parameter (?tag=a&tag=b)."""
    pairs: list[tuple[str, str]] = []
    for name, raw in _as_object(value, "params").items():
        if raw is None:
            continue  # an optional parameter the model left empty: leave it out
        items = raw if isinstance(raw, list) else [raw]
        for item in items:
            text = _scalar_text(item)
            if text is None:
                raise InvalidArgument(
                    f"params: the value of {name} must be a string, number, boolean or a list of "
                    f"those, not {shown(item)}."
                )
            pairs.append((str(name), text))
    return pairs


def with_params(url: str, params: Sequence[tuple[str, str]]) -> str:
    """The URL with params appended to any query it already has (like requests does)."""
    parsed = parse_url(url)  # a clear invalid_url before anything else, and a URL we can extend
    if not params:
        return str(parsed)
    extra = urlencode(params).encode("ascii")
    query = parsed.query + b"&" + extra if parsed.query else extra
    return str(parsed.copy_with(query=query))


def request_body(body: Any, json_value: Any, method: str) -> tuple[bytes | None, str | None]:
    """The bytes to send and the Content-Type to use unless the caller set one."""
    if body is not None and json_value is not None:
        raise InvalidArgument(
            "pass either body (a string sent as is) or json (a value sent as JSON), not both."
        )
    if body is None and json_value is None:
        return None, None
    if method == "HEAD":
        raise InvalidArgument("a HEAD request has no body; leave out body and json.")
    if json_value is not None:
        data, content_type = _json_bytes(json_value, "json"), "application/json"
    elif isinstance(body, str):
        data = body.encode("utf-8")
        content_type = "application/json" if _is_json_document(body) else "text/plain; charset=utf-8"
    elif isinstance(body, dict | list | bool):
        # The SDK turns a string argument that holds JSON into the value it holds before the tool
        # sees it, so '{"a": 1}' sent as body arrives as a dict: send that JSON back as written.
        data, content_type = _json_bytes(body, "body"), "application/json"
    else:
        raise InvalidArgument(f"body must be a string (use json to send a JSON value), not {body!r}.")
    if len(data) > REQUEST_BODY_LIMIT:
        raise InvalidArgument(
            f"the request body is {describe_size(len(data))}; at most {describe_size(REQUEST_BODY_LIMIT)} "
            "can be sent."
        )
    return data, content_type


def _json_bytes(value: Any, name: str) -> bytes:
    """``value`` as JSON; infinity and NaN are refused, since "NaN" and "Infinity" are not JSON."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except ValueError as exc:
        raise InvalidArgument(f"{name} could not be encoded as JSON ({exc}).") from None


def _is_json_document(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    return True
