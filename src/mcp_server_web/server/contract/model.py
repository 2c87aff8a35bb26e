"""What every tool's input model is: how raw arguments become a validated instance, and how the
published input schema is generated from the model.

One declaration per tool: the model's fields (their types, lenient validators from lenient.py,
descriptions and bounds) are both the schema clients read and the coercion the tool applies.

The raw arguments are seen whole (toolspec.RawArguments hands them over untouched), so:
- a name the tool does not take is ``invalid_argument`` naming it and the names it does take
  (a model's ``maxLength: 300`` is not silently ignored);
- the camelCase spelling of a multi-word name (``maxLength``, ``startIndex``) is the same
  argument; both spellings with different values are refused;
- null is dropped before validation: it means exactly what leaving the argument out means, so
  strict clients (which must send every argument) can send null for the ones they mean to omit.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from mcp_server_web.errors import InvalidArgument, WebToolError
from mcp_server_web.server.contract.lenient import json_kind, shown

_NAME_SHOWN = 60
"""Most characters of an unknown argument's name quoted back."""
_NO_DEFAULT: tuple[object, ...] = (None, [], {})
"""Defaults not published: "absent" needs no default in a schema (and the schemas before the
typed models had none)."""
_OUTSIDE_NULLABLE = ("description", "default")
"""The keys of a property that stay beside its anyOf when it is made nullable: what it means and
what leaving it out gives. Its type, bounds, enum and pattern go inside, on the non-null branch."""


class ToolInput(BaseModel):
    """Base of each tool's input model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool_name: ClassVar[str]

    @classmethod
    def missing(cls, name: str) -> WebToolError:
        """The error for a required argument left out (or null)."""
        return InvalidArgument(f"{name} is required.")

    @classmethod
    def argument_names(cls) -> list[str]:
        """The arguments' published names, in order (a field's alias where Python needs another
        name: http_request's json)."""
        return [field.alias or name for name, field in cls.model_fields.items()]

    @classmethod
    def aliases(cls) -> dict[str, str]:
        """The camelCase spelling of each multi-word argument, to its published name."""
        return {to_camel(name): name for name in cls.argument_names() if "_" in name}

    @classmethod
    def from_arguments(cls, raw: Mapping[str, Any]) -> Self:
        """The arguments a client sent, validated; every failure an ``InvalidArgument`` (or the
        tool's own error for its URL) with a plain sentence, never pydantic's text."""
        names, aliases = cls.argument_names(), cls.aliases()
        values: dict[str, Any] = {}
        spelled: dict[str, str] = {}
        unknown: list[str] = []
        for key, value in raw.items():
            name = key if key in names else aliases.get(key)
            if name is None:
                unknown.append(key)
                continue
            if value is None:
                continue
            if name in values and values[name] != value:
                raise InvalidArgument(
                    f"{spelled[name]} and {key} are the same argument and were given different values: "
                    "pass one of them."
                )
            values[name], spelled[name] = value, key
        if unknown:
            quoted = ", ".join(shown(key[:_NAME_SHOWN]) for key in unknown)
            raise InvalidArgument(
                f"{cls.tool_name} has no argument{'s' if len(unknown) > 1 else ''} named {quoted}; "
                f"its arguments are: {', '.join(names)}."
            )
        for name, field in cls.model_fields.items():
            if field.is_required() and (field.alias or name) not in values:
                raise cls.missing(field.alias or name)
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            # Every field has a lenient validator that raises our own errors; this is the net
            # under them, worded without pydantic's dump of the input.
            first = error.errors()[0]
            name = str(first["loc"][0]) if first["loc"] else "an argument"
            raise InvalidArgument(
                f"{name} has a value {cls.tool_name} cannot use ({json_kind(first.get('input'))})."
            ) from None

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        """The published inputSchema: the model's JSON schema, each optional argument nullable
        (``anyOf: [<its schema>, {"type": "null"}]``, description and default beside it), no
        pydantic titles."""
        generated = copy.deepcopy(cls.model_json_schema())
        required = set(generated.get("required", ()))
        properties: dict[str, Any] = {}
        for name, prop in generated["properties"].items():
            prop.pop("title", None)
            _drop_null_branch(prop)
            if "default" in prop and prop["default"] in _NO_DEFAULT:
                del prop["default"]
            if name not in required and set(prop) - set(_OUTSIDE_NULLABLE):
                outside = {key: prop.pop(key) for key in _OUTSIDE_NULLABLE if key in prop}
                prop = {"anyOf": [prop, {"type": "null"}], **outside}
            properties[name] = prop
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = [name for name in cls.argument_names() if name in required]
        return schema


def _drop_null_branch(prop: dict[str, Any]) -> None:
    """A field typed ``X | None`` as its schema for X alone (made nullable again, in one form, by
    input_schema)."""
    branches = prop.get("anyOf")
    if not isinstance(branches, list) or {"type": "null"} not in branches:
        return
    rest = [branch for branch in branches if branch != {"type": "null"}]
    if len(rest) == 1:
        del prop["anyOf"]
        prop.update(rest[0])
    else:
        prop["anyOf"] = rest
