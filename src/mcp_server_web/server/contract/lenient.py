"""Lenient argument types, the way models actually send arguments.

Models send "8000" for 8000, "true" for true, numbers past the documented bounds and enum values
in any case. The published schemas stay strict (types, inclusive minimum/maximum, enums) so a
model knows the contract; each type here coerces and clamps what arrives, as a pydantic
BeforeValidator, and what cannot be made sense of is an ``InvalidArgument`` that names the
argument and what it accepts. The errors are raised as they are (not ValueError), so pydantic
passes them through untouched and its own wording never reaches a client.

A value of null never reaches these validators: the tool's input model drops it first, so null
means exactly what leaving the argument out means (contract/model.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import ValidationInfo

from mcp_server_web.errors import InvalidArgument, WebToolError
from mcp_server_web.providers import normalize_domain

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
C = TypeVar("C", bound=str)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = 30
_PAST_ANY_LIMIT: int = 10**_MAX_DIGITS
"""What a longer integer is taken as (with its sign)."""
_SHOWN_LIMIT = 100
_CODE = re.compile(r"[A-Za-z]{2}")
_FLOAT_CAP = 1e300
"""Where a number argument is clamped before it becomes a float: past any limit a tool has."""

Validator = Callable[[Any, ValidationInfo], Any]


def json_kind(value: object) -> str:
    """What JSON calls the kind of ``value``, with its article: "a string", "a number", "null"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def shown(value: Any) -> str:
    """``value`` as an error message quotes it: its repr, at most 100 characters.

    repr() itself raises ValueError for an int of more than 4,300 digits."""
    try:
        text = repr(value)
    except ValueError:
        return "a number too long to show"
    return text if len(text) <= _SHOWN_LIMIT else text[: _SHOWN_LIMIT - 1] + "…"


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


def whole_number(minimum: int, maximum: int | None = None) -> Validator:
    """An integer, clamped to [minimum, maximum]; any size clamps, infinity and NaN do not."""

    def validate(value: Any, info: ValidationInfo) -> int:
        number = _number(value)
        if not isinstance(number, int):
            if number is None or not math.isfinite(number) or not number.is_integer():
                raise InvalidArgument(f"{info.field_name} must be a whole number, not {shown(value)}.")
            number = int(number)
        number = max(minimum, number)
        return number if maximum is None else min(maximum, number)

    return validate


def bounded_number(minimum: float) -> Validator:
    """A number, at least ``minimum``; infinity and NaN are refused. An upper bound that depends
    on the server (http_request's timeout) is applied by the tool."""

    def validate(value: Any, info: ValidationInfo) -> float:
        number = _number(value)
        if number is None or (isinstance(number, float) and not math.isfinite(number)):
            raise InvalidArgument(
                f"{info.field_name} must be a number (not infinite, not NaN); got {shown(value)}."
            )
        # Compared before converting: an int beyond float's range (10**400) clamps instead of
        # raising OverflowError.
        return float(max(minimum, min(_FLOAT_CAP, number)))

    return validate


def truth(value: Any, info: ValidationInfo) -> bool:
    """true or false; "true"/"yes"/"on"/"1" and their opposites too."""
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
    raise InvalidArgument(f"{info.field_name} must be true or false, not {shown(value)}.")


def choice(choices: Sequence[C], *, upper: bool = False) -> Validator:
    """One of ``choices``, in any case."""

    def validate(value: Any, info: ValidationInfo) -> str:
        if isinstance(value, str):
            wanted = value.strip().upper() if upper else value.strip().lower()
            for option in choices:
                if wanted == option:
                    return option
        raise InvalidArgument(f"{info.field_name} must be one of {', '.join(choices)}; got {shown(value)}.")

    return validate


def optional_choice(choices: Sequence[C]) -> Validator:
    """One of ``choices`` in any case, or a blank string for none."""
    pick = choice(choices)

    def validate(value: Any, info: ValidationInfo) -> str | None:
        return None if value == "" else pick(value, info)

    return validate


def code(standard: str, *, upper: bool) -> Validator:
    """A two-letter code (ISO 3166-1 alpha-2 or ISO 639-1), in the case its standard writes it;
    None for a blank string."""

    def validate(value: Any, info: ValidationInfo) -> str | None:
        if value == "":
            return None
        if isinstance(value, str) and _CODE.fullmatch(value.strip()):
            text = value.strip()
            return text.upper() if upper else text.lower()
        raise InvalidArgument(f"{info.field_name} must be a two-letter {standard} code; got {shown(value)}.")

    return validate


def text(
    max_length: int | None = None, *, error: type[WebToolError] = InvalidArgument
) -> Callable[[Any, ValidationInfo], str]:
    """A non-empty string, stripped, of at most ``max_length`` characters."""

    def validate(value: Any, info: ValidationInfo) -> str:
        name = info.field_name
        if not isinstance(value, str):
            raise error(f"{name} must be a string, got {json_kind(value)}.")
        stripped = value.strip()
        if not stripped:
            raise error(f"{name} is required and must be a non-empty string.")
        if max_length is not None and len(stripped) > max_length:
            raise InvalidArgument(f"{name} is {len(stripped)} characters long; the limit is {max_length}.")
        return stripped

    return validate


def optional_text(max_length: int) -> Validator:
    """A string stripped, or None when blank; at most ``max_length`` characters."""
    required = text(max_length)

    def validate(value: Any, info: ValidationInfo) -> str | None:
        if isinstance(value, str) and not value.strip():
            return None
        return required(value, info)

    return validate


def domains(value: Any, info: ValidationInfo) -> tuple[str, ...]:
    """A list of site filters; a comma-separated string is accepted too. Hosts are normalized."""
    name = info.field_name
    if value == "":
        return ()
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise InvalidArgument(f"{name} must be a list of domain names, got {json_kind(value)}.")
    found: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise InvalidArgument(f"{name} must contain domain names as strings, not {shown(item)}.")
        domain = normalize_domain(item)
        if domain and domain not in found:
            found.append(domain)
    return tuple(found)
