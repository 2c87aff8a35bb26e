"""Lenient argument coercion, the way models actually send arguments.

Models send "8000" for 8000, "true" for true, and numbers past the documented bounds. The
published schemas stay strict (types, inclusive minimum/maximum, enums) so a model knows the
contract; what arrives is coerced and clamped here, and what cannot be made sense of is an
`invalid_argument` error that names the argument and what it accepts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from mcp_server_web.errors import InvalidArgument
from mcp_server_web.providers import normalize_domain

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
C = TypeVar("C", bound=str)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = 30
_PAST_ANY_LIMIT: int = 10**_MAX_DIGITS
"""What a longer integer is taken as (with its sign)."""
_SHOWN_LIMIT = 100


def as_int(value: Any, name: str, *, default: int, minimum: int, maximum: int | None = None) -> int:
    """An integer argument, clamped to [minimum, maximum]; any size clamps, infinity and NaN do not."""
    if value is None:
        return default
    number = _number(value)
    if not isinstance(number, int):
        if number is None or not math.isfinite(number) or not number.is_integer():
            raise InvalidArgument(f"{name} must be a whole number, not {shown(value)}.")
        number = int(number)
    number = max(minimum, number)
    return number if maximum is None else min(maximum, number)


def as_float(value: Any, name: str, *, default: float, minimum: float, maximum: float) -> float:
    """A number argument, clamped to [minimum, maximum]; infinity and NaN are refused."""
    if value is None:
        return default
    number = _number(value)
    if number is None or (isinstance(number, float) and not math.isfinite(number)):
        raise InvalidArgument(f"{name} must be a number (not infinite, not NaN); got {shown(value)}.")
    # Compared before converting: an int beyond float's range (10**400) clamps instead of
    # raising OverflowError.
    return float(min(maximum, max(minimum, number)))


def _number(value: object) -> int | float | None:
    """The number a JSON number or a numeric string stands for, or None when it is neither.

    Integers stay exact whatever their size; a float may be infinite or NaN (a JSON 1e400 is
    infinite), which each caller refuses.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _INTEGER.fullmatch(text):
        # Past any limit a tool has, and short enough for int() (which refuses over 4,300 digits).
        if len(text.lstrip("+-")) <= _MAX_DIGITS:
            return int(text)
        return -_PAST_ANY_LIMIT if text.startswith("-") else _PAST_ANY_LIMIT
    try:
        return float(text)
    except ValueError:
        return None


def shown(value: Any) -> str:
    """``value`` as an error message quotes it: its repr, at most 100 characters.

    repr() itself raises ValueError for an int of more than 4,300 digits."""
    try:
        text = repr(value)
    except ValueError:
        return "a number too long to show"
    return text if len(text) <= _SHOWN_LIMIT else text[: _SHOWN_LIMIT - 1] + "…"


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
    raise InvalidArgument(f"{name} must be true or false, not {shown(value)}.")


def as_choice(value: Any, name: str, *, choices: Sequence[C], default: C) -> C:
    if value is None:
        return default
    if isinstance(value, str):
        lowered = value.strip().lower()
        for choice in choices:
            if lowered == choice:
                return choice
    raise InvalidArgument(f"{name} must be one of {', '.join(choices)}; got {shown(value)}.")


_CODE = re.compile(r"[A-Za-z]{2}")


def as_code(value: Any, name: str, *, standard: str, upper: bool) -> str | None:
    """A two-letter code (ISO 3166-1 alpha-2 or ISO 639-1), in the case its standard writes it;
    None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and _CODE.fullmatch(value.strip()):
        code = value.strip()
        return code.upper() if upper else code.lower()
    raise InvalidArgument(f"{name} must be a two-letter {standard} code; got {shown(value)}.")


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
        raise InvalidArgument(f"{name} must be a list of domain names, not {shown(value)}.")
    domains = []
    for item in items:
        if not isinstance(item, str):
            raise InvalidArgument(f"{name} must contain domain names as strings, not {shown(item)}.")
        domain = normalize_domain(item)
        if domain and domain not in domains:
            domains.append(domain)
    return tuple(domains)
