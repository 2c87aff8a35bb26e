"""Keys and values of the shared state as text and bytes, for a backend outside this process.

A value is None, a str, or a frozen dataclass of a fixed registry (``Codec(types={tag: class})``):
the composition root builds that registry, since state/ imports none of the packages that declare
the classes. Nothing is ever imported, evaluated or unpickled by name from stored data: whoever
can write to the shared store can make a replica decode only registered classes, with fields of
their declared types.

An entry is ``MAGIC``, a version byte, the length of a JSON header (4 bytes, big-endian), the
header, then raw blobs. The header describes the value; bytes, and texts longer than
``LONG_TEXT`` characters, are blobs, referenced in order by their length (``{"b": n}`` for bytes,
``{"s": n}`` for UTF-8 text). So a body of several MB is copied once, never base64'd or escaped,
and the header stays small: it is capped at ``MAX_HEADER_BYTES``, which bounds what parsing it
can allocate. Decoding checks the entry's length before reading it, then every field against its
class's type hints; anything amiss is ``CorruptEntry``.

A key is hashed (``encode_key``): URLs and query texts never appear in the store's key names.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import struct
import typing
from collections.abc import Mapping
from datetime import date
from types import UnionType
from typing import Any, Literal, get_args, get_origin, get_type_hints

from mcp_server_web.state.port import Key

MAGIC = b"\x93MWS"
"""Opens every entry: not JSON, not a pickle, not text."""
VERSION = 1
_PREFIX = struct.Struct(">4sBI")  # magic, version, header length

MAX_HEADER_BYTES = 1 << 20
"""The JSON header's limit; json.loads of 1 MiB allocates a few tens of MB at worst."""
MAX_ITEMS = 100_000
"""Values (fields, tuple items, dict entries) in one entry."""
MAX_DEPTH = 16
"""Containers within containers; the registered types go 4 deep."""
LONG_TEXT = 256
"""Characters above which a str is stored as a blob rather than in the header."""


class CorruptEntry(ValueError):
    """Stored bytes that are not a value this codec wrote: truncated, too large, another format or
    version, or forged. The message is short and never quotes more than a few characters of it."""


class Unencodable(ValueError):
    """A value the codec does not write: not registered, a field not of its declared type, or too
    many parts. The backend keeps such a value to itself."""


# --- keys ----------------------------------------------------------------------------------------


def key_text(key: Key) -> str:
    """A text that tells any two keys apart that are not the same values of the same types.

    Unlike a dict, it tells 1, 1.0 and True apart, and 0.0 from -0.0. Every part writes itself
    without a comma or a parenthesis outside its quotes, so tuples nest unambiguously.
    """
    return _key_part(key, 0)


def encode_key(key: Key) -> str:
    """The SHA-256 of ``key_text(key)``, in hex: the same in every process and Python run."""
    return hashlib.sha256(key_text(key).encode("ascii")).hexdigest()


def _key_part(part: object, depth: int) -> str:
    if depth > MAX_DEPTH:
        raise TypeError("a key is nested too deeply")
    if part is None:
        return "null"
    if isinstance(part, bool):
        return "true" if part else "false"
    if isinstance(part, int):
        return str(int(part))
    if isinstance(part, float):
        return "f" + repr(float(part))
    if isinstance(part, str):
        return json.dumps(str(part), ensure_ascii=True)
    if isinstance(part, tuple):
        return "(" + ",".join(_key_part(item, depth + 1) for item in part) + ")"
    raise TypeError(
        f"a key part must be a str, int, float, bool, None or a tuple of them, not {type(part).__name__}"
    )


# --- values --------------------------------------------------------------------------------------


class _Walk:
    """One encode or decode: the blobs, the values counted, and the exception it raises."""

    __slots__ = ("blobs", "data", "error", "items", "offset")

    def __init__(self, error: type[ValueError], data: bytes = b"", offset: int = 0) -> None:
        self.error = error
        self.items = 0
        self.blobs: list[bytes] = []  # encoding: what follows the header
        self.data = data  # decoding: the entry, and where the next blob starts
        self.offset = offset

    def count(self, depth: int) -> None:
        self.items += 1
        if self.items > MAX_ITEMS:
            raise self.error(f"more than {MAX_ITEMS} values")
        if depth > MAX_DEPTH:
            raise self.error(f"nested more than {MAX_DEPTH} deep")

    def put_blob(self, kind: str, blob: bytes) -> dict[str, int]:
        self.blobs.append(blob)
        return {kind: len(blob)}

    def take_blob(self, kind: str, raw: object) -> bytes | None:
        """The next blob when raw refers to one of this kind; None when raw is no blob reference."""
        if not (type(raw) is dict and len(raw) == 1 and kind in raw):
            return None
        length = raw[kind]
        if type(length) is not int or not 0 <= length <= len(self.data) - self.offset:
            raise self.error("a blob's length is past the end of the entry")
        blob = self.data[self.offset : self.offset + length]
        self.offset += length
        return blob

    def mismatch(self, expected: str, raw: object) -> ValueError:
        return self.error(f"expected {expected}, got {_kind(raw)}")


def _kind(raw: object) -> str:
    if type(raw) is dict and len(raw) == 1 and next(iter(raw)) in ("b", "s"):
        return "bytes" if "b" in raw else "a long str"
    return {dict: "an object", list: "an array", type(None): "null"}.get(type(raw), type(raw).__name__)


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


class _Node:
    """How one declared type is written to, and read from, the JSON header."""

    name = "?"

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        raise NotImplementedError

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        raise NotImplementedError


class _Scalar(_Node):
    def __init__(self, kind: type) -> None:
        self.kind = kind
        self.name = kind.__name__ if kind is not type(None) else "None"

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        return self.decode(value, walk, depth)  # a scalar is itself in JSON, and checked alike

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(raw) is self.kind:
            return raw
        if self.kind is float and type(raw) is int:
            return float(raw)  # an int where a float is declared, as Python allows
        raise walk.mismatch(self.name, raw)


class _Str(_Node):
    name = "str"

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if not isinstance(value, str):
            raise walk.mismatch(self.name, value)
        if len(value) > LONG_TEXT:
            return walk.put_blob("s", value.encode("utf-8", "surrogatepass"))
        return str(value)

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(raw) is str:
            return raw
        blob = walk.take_blob("s", raw)
        if blob is None:
            raise walk.mismatch(self.name, raw)
        try:
            return blob.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise walk.error("a long str is not UTF-8") from None


class _Bytes(_Node):
    name = "bytes"

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if not isinstance(value, bytes):
            raise walk.mismatch(self.name, value)
        return walk.put_blob("b", bytes(value))

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        blob = walk.take_blob("b", raw)
        if blob is None:
            raise walk.mismatch(self.name, raw)
        return blob


class _Date(_Node):
    """A calendar day, as its ISO text (a search's published_after, published_before)."""

    name = "date"

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(value) is not date:
            raise walk.mismatch(self.name, value)
        return value.isoformat()

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(raw) is str and len(raw) == len("YYYY-MM-DD"):
            try:
                return date.fromisoformat(raw)
            except ValueError:
                pass
        raise walk.mismatch(self.name, raw)


class _Literal(_Node):
    def __init__(self, values: tuple[object, ...]) -> None:
        self.values = values
        self.name = "one of " + ", ".join(map(repr, values))

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        return self.decode(value, walk, depth)

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        for value in self.values:
            if type(raw) is type(value) and raw == value:
                return value
        raise walk.error(f"expected {self.name}, got {_short(raw) if type(raw) is str else _kind(raw)}")


class _Optional(_Node):
    def __init__(self, inner: _Node) -> None:
        self.inner = inner
        self.name = f"{inner.name} or None"

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        return None if value is None else self.inner.encode(value, walk, depth)

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        return None if raw is None else self.inner.decode(raw, walk, depth)


class _Tuple(_Node):
    def __init__(self, item: _Node) -> None:
        self.item = item
        self.name = f"tuple[{item.name}, ...]"

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(value) is not tuple:
            raise walk.mismatch(self.name, value)
        return [self.item.encode(item, walk, depth + 1) for item in value]

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(raw) is not list:
            raise walk.mismatch(self.name, raw)
        return tuple(self.item.decode(item, walk, depth + 1) for item in raw)


class _Dict(_Node):
    def __init__(self, value: _Node) -> None:
        self.value = value
        self.name = f"dict[str, {value.name}]"

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(value) is not dict or not all(type(key) is str for key in value):
            raise walk.mismatch(self.name, value)
        return {key: self.value.encode(item, walk, depth + 1) for key, item in value.items()}

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(raw) is not dict:  # JSON object keys are always str
            raise walk.mismatch(self.name, raw)
        return {key: self.value.decode(item, walk, depth + 1) for key, item in raw.items()}


class _Class(_Node):
    """A registered dataclass: ``{"t": tag, "f": {field: value, ...}}``, every field present."""

    def __init__(self, tag: str, cls: type) -> None:
        self.tag = tag
        self.cls = cls
        self.name = tag
        self.fields: dict[str, _Node] = {}  # filled once every class has its node

    def encode(self, value: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if type(value) is not self.cls:
            raise walk.mismatch(self.name, value)
        fields = {}
        for name, node in self.fields.items():
            try:
                fields[name] = node.encode(getattr(value, name), walk, depth + 1)
            except walk.error as error:
                raise walk.error(f"{self.tag}.{name}: {error}") from None
        return {"t": self.tag, "f": fields}

    def decode(self, raw: Any, walk: _Walk, depth: int) -> Any:
        walk.count(depth)
        if not (type(raw) is dict and raw.keys() == {"t", "f"} and type(raw["f"]) is dict):
            raise walk.mismatch(self.name, raw)
        if raw["t"] != self.tag:
            tag = raw["t"]
            raise walk.error(f"expected {self.tag}, got {_short(tag) if type(tag) is str else _kind(tag)}")
        given: dict[str, Any] = raw["f"]
        if given.keys() != self.fields.keys():
            extra = sorted(given.keys() - self.fields.keys())
            missing = sorted(self.fields.keys() - given.keys())
            what = f"unknown field {_short(extra[0])}" if extra else f"missing field {missing[0]!r}"
            raise walk.error(f"{self.tag}: {what}")
        values = {}
        for name, node in self.fields.items():
            try:
                values[name] = node.decode(given[name], walk, depth + 1)
            except walk.error as error:
                raise walk.error(f"{self.tag}.{name}: {error}") from None
        try:
            return self.cls(**values)
        except Exception as error:  # a registered class's own checks (__post_init__) refused it
            raise walk.error(f"{self.tag}: {type(error).__name__}") from None


class Codec:
    """Writes and reads the values of the shared state; see the module docstring.

    ``types`` maps a stable tag (written in every entry: renaming one forgets what is stored) to
    a dataclass; every dataclass a field holds must be registered too. Fields may be declared as
    str, int, float, bool, bytes, None, a date, a Literal, X | None, tuple[X, ...], dict[str, X] or a
    registered dataclass; anything else is refused here, when the server starts.
    """

    def __init__(self, types: Mapping[str, type[Any]]) -> None:
        self._by_tag: dict[str, _Class] = {}
        self._by_class: dict[type, _Class] = {}
        for tag, cls in types.items():
            if not (isinstance(tag, str) and tag) or not (
                isinstance(cls, type) and dataclasses.is_dataclass(cls)
            ):
                raise TypeError(f"{tag!r}: only a dataclass can be registered, under a non-empty tag")
            if cls in self._by_class:
                raise TypeError(f"{cls.__qualname__} is registered twice")
            node = _Class(tag, cls)
            self._by_tag[tag] = self._by_class[cls] = node
        for node in self._by_tag.values():
            hints = get_type_hints(node.cls, include_extras=False)
            for field in dataclasses.fields(node.cls):
                if not field.init:
                    raise TypeError(f"{node.tag}.{field.name} is not an argument of {node.cls.__qualname__}")
                node.fields[field.name] = self._node(hints[field.name], f"{node.tag}.{field.name}")
        schema = sorted(
            (tag, [(name, f.name) for name, f in node.fields.items()]) for tag, node in self._by_tag.items()
        )
        self.fingerprint = hashlib.sha256(json.dumps([VERSION, schema]).encode()).hexdigest()[:12]
        """Names this format and these classes' fields: replicas whose codecs differ (a rolling
        upgrade that changed a class) can keep their entries apart by it, rather than each
        reading the other's as corrupt."""

    def _node(self, hint: Any, where: str) -> _Node:
        origin, args = get_origin(hint), get_args(hint)
        if hint is str:
            return _Str()
        if hint is bytes:
            return _Bytes()
        if hint is date:
            return _Date()
        if hint in (int, float, bool, type(None), None):
            return _Scalar(type(None) if hint is None else hint)
        if origin is Literal and all(type(arg) in (str, int, bool) for arg in args):
            return _Literal(args)
        if origin in (UnionType, typing.Union) and len(args) == 2 and type(None) in args:
            (inner,) = (arg for arg in args if arg is not type(None))
            return _Optional(self._node(inner, where))
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            return _Tuple(self._node(args[0], where))
        if origin is dict and args[:1] == (str,):
            return _Dict(self._node(args[1], where))
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if hint not in self._by_class:
                raise TypeError(f"{where}: {hint.__qualname__} is not registered")
            return self._by_class[hint]
        raise TypeError(f"{where}: {hint!r} cannot be stored")

    def encode(self, value: object) -> bytes:
        """value as an entry; Unencodable when it is not None, a str or a registered dataclass
        whose fields hold what they declare, or has too many parts."""
        walk = _Walk(Unencodable)
        if value is None or isinstance(value, str):
            header: Any = _Optional(_Str()).encode(value, walk, 0)
        elif type(value) in self._by_class:
            header = self._by_class[type(value)].encode(value, walk, 0)
        else:
            raise Unencodable(f"{type(value).__qualname__} is not registered")
        text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        if len(text) > MAX_HEADER_BYTES:
            raise Unencodable(f"its header would take more than {MAX_HEADER_BYTES} bytes")
        return b"".join([_PREFIX.pack(MAGIC, VERSION, len(text)), text, *walk.blobs])

    def decode(self, data: bytes, *, max_bytes: int) -> Any:
        """The value data holds; CorruptEntry, and nothing else, when data is not an entry this
        codec wrote (of at most max_bytes), whoever wrote it."""
        if len(data) > max_bytes:
            raise CorruptEntry(f"the entry has {len(data)} bytes, more than {max_bytes}")
        if len(data) < _PREFIX.size:
            raise CorruptEntry("the entry is shorter than its prefix")
        magic, version, length = _PREFIX.unpack_from(data)
        if magic != MAGIC:
            raise CorruptEntry("the entry is not in this codec's format")
        if version != VERSION:
            raise CorruptEntry(f"the entry is of version {version}, not {VERSION}")
        if length > MAX_HEADER_BYTES or length > len(data) - _PREFIX.size:
            raise CorruptEntry("the entry's header length is past its limit or its end")
        start = _PREFIX.size + length
        try:
            header = json.loads(data[_PREFIX.size : start].decode("utf-8", "surrogatepass"))
        except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise CorruptEntry("the entry's header is not JSON (or is nested too deeply)") from None
        walk = _Walk(CorruptEntry, data, start)
        if type(header) is dict and "t" in header:
            tag = header["t"]
            node = self._by_tag.get(tag) if type(tag) is str else None
            if node is None:
                raise CorruptEntry(f"unknown tag {_short(tag) if type(tag) is str else _kind(tag)}")
            value = node.decode(header, walk, 0)
        else:
            value = _Optional(_Str()).decode(header, walk, 0)
        if walk.offset != len(data):
            raise CorruptEntry("the entry has bytes past its last blob")
        return value
