"""Lenient argument coercion, the way models actually send arguments.

Models send "8000" for 8000, "true" for true, and numbers past the documented bounds. The
published schemas stay strict (types, inclusive minimum/maximum, enums) so a model knows the
contract; what arrives is coerced and clamped here, and what cannot be made sense of is an
`invalid_argument` error that names the argument and what it accepts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from mcp_server_web.errors import InvalidArgument
from mcp_server_web.providers.results import normalize_domain

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
C = TypeVar("C", bound=str)


def as_int(value: Any, name: str, *, default: int, minimum: int, maximum: int | None = None) -> int:
    """An integer argument, clamped to [minimum, maximum]."""
    if value is None:
        return default
    number: int
    if isinstance(value, bool):
        raise InvalidArgument(f"{name} must be a whole number, not {value!r}.")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _looks_integral(value.strip()):
        number = int(float(value.strip()))
    else:
        raise InvalidArgument(f"{name} must be a whole number, not {value!r}.")
    number = max(minimum, number)
    return number if maximum is None else min(maximum, number)


def _looks_integral(text: str) -> bool:
    try:
        return float(text).is_integer()
    except ValueError:
        return False


def as_bool(value: Any, name: str, *, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    raise InvalidArgument(f"{name} must be true or false, not {value!r}.")


def as_choice(value: Any, name: str, *, choices: Sequence[C], default: C) -> C:
    if value is None:
        return default
    if isinstance(value, str):
        lowered = value.strip().lower()
        for choice in choices:
            if lowered == choice:
                return choice
    raise InvalidArgument(f"{name} must be one of {', '.join(choices)}; got {value!r}.")


def as_text(value: Any, name: str, *, max_length: int | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{name} is required and must be a non-empty string.")
    text = value.strip()
    if max_length is not None and len(text) > max_length:
        raise InvalidArgument(f"{name} is {len(text)} characters long; the limit is {max_length}.")
    return text


def as_domains(value: Any, name: str) -> tuple[str, ...]:
    """A list of site filters; a comma-separated string is accepted too. Hosts are normalized."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise InvalidArgument(f"{name} must be a list of domain names, not {value!r}.")
    domains = []
    for item in items:
        if not isinstance(item, str):
            raise InvalidArgument(f"{name} must contain domain names as strings, not {item!r}.")
        domain = normalize_domain(item)
        if domain and domain not in domains:
            domains.append(domain)
    return tuple(domains)
