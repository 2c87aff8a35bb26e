"""Strict URL parsing: user text to an ``httpx.URL`` that every parser reads the same way.

``parse_url`` accepts http(s) only, no credentials, no fragment, no backslash tricks, and rewrites
every IPv4 spelling a browser would accept (``0x7f.1``, ``2130706433``, ``0177.0.0.1``...) to the
dotted quad it really means, so the address that is vetted is the address that is connected to.
A URL refused as ambiguous whose host, as some parser would read it, is a non-public address
(``http://x@127.0.0.1/``, ``http:\\\\10.0.0.1\\``) is refused as a blocked address
(``HiddenAddress``): that is where it was aimed.
"""

from __future__ import annotations

import ipaddress
import re
import string
from urllib.parse import unquote_to_bytes, urljoin

import httpx
import idna

from mcp_server_web.errors import BlockedAddress, InvalidURL
from mcp_server_web.fetch.net.addresses import (
    BUILT_IN_POLICY,
    IPAddress,
    refusal_text,
    shortened,
)

MAX_URL_LENGTH = 4096
ALLOWED_SCHEMES = ("http", "https")

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
# A host name after IDNA processing: letters, digits, hyphen, dot, underscore (seen in real
# names). Everything else (%, spaces, quotes, brackets...) is refused rather than guessed at.
_HOST_CHARS = frozenset(string.ascii_lowercase + string.digits + "-._")
_DIGITS = frozenset(string.digits)
_HEX_DIGITS = frozenset(string.hexdigits)
_OCT_DIGITS = frozenset(string.octdigits)
# RFC 6874 allows any unreserved character in an IPv6 zone id ("eth0", "en0", "1", "wlan0.100").
_ZONE_CHARS = frozenset(string.ascii_letters + string.digits + "-._~")


def parse_url(raw: str) -> httpx.URL:
    """Parse and normalise a URL to fetch, or raise InvalidURL with a sentence saying why.

    httpx's own parser is lenient (it keeps ``0x7f.1`` as a host name and accepts ``user@``), and
    browsers, resolvers and HTTP libraries disagree on such inputs; that disagreement is what SSRF
    bypasses exploit. So the authority is parsed here, strictly, and the URL handed back is
    rebuilt from the parts that were checked.
    """
    text = raw.strip()
    if not text:
        raise InvalidURL("the URL is empty.")
    if len(text) > MAX_URL_LENGTH:
        raise InvalidURL(f"the URL is {len(text)} characters long; at most {MAX_URL_LENGTH} are accepted.")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        raise InvalidURL("the URL contains control characters (tabs, newlines or similar).")
    if not text.isascii():
        try:
            # JSON's "\ud800" escapes reach us as lone surrogates, which every encoder below
            # (percent-decoding, IDNA, httpx) rejects with an untyped UnicodeEncodeError.
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidURL("the URL contains an unpaired surrogate, which is not valid Unicode.") from None

    scheme, rest = _split_scheme(text)
    if not rest.startswith("//"):
        _refuse_hidden_address(rest, _NO_SLASHES)
        if "\\" in rest[:2]:
            raise InvalidURL("the URL contains a backslash where '//' should follow the scheme.")
        raise InvalidURL(f"the URL must start with {scheme}:// followed by a host name.")
    rest = rest[2:]

    authority_end = len(rest)
    for delimiter in "/?#":
        position = rest.find(delimiter)
        if position != -1:
            authority_end = min(authority_end, position)
    authority, tail = rest[:authority_end], rest[authority_end:]
    tail = tail.split("#", 1)[0]  # the fragment never reaches the server

    if not authority:
        # "http:///10.0.0.1/": no host for RFC 3986, but browsers skip the extra slash.
        _refuse_hidden_address("//" + rest, _EMPTY_HOST)
    if "\\" in authority:
        # Browsers read "\" as "/" in http(s) URLs while RFC 3986 parsers do not, so
        # "http://good\@evil/" names a different host depending on who reads it.
        _refuse_hidden_address("//" + rest, _BACKSLASH)
        raise InvalidURL("the URL contains a backslash in its host part.")
    if "@" in authority:
        _refuse_hidden_address("//" + rest, _CREDENTIALS, _AS_CREDENTIALS)
        raise InvalidURL("URLs with embedded credentials (user:password@host) are not accepted.")

    host_text, port = _split_port(authority)
    host, ip = _parse_host(host_text)

    url_host = f"[{host}]" if isinstance(ip, ipaddress.IPv6Address) else host
    url_port = f":{port}" if port is not None else ""
    try:
        url = httpx.URL(f"{scheme}://{url_host}{url_port}{tail}")
    except httpx.InvalidURL as exc:
        raise InvalidURL(f"the URL could not be parsed ({exc}).") from None
    # Defence in depth: httpx must see exactly the host we checked.
    if url.raw_host.decode("ascii") != host or url.scheme != scheme:
        raise InvalidURL("the URL could not be parsed unambiguously.")
    return url


def _split_scheme(text: str) -> tuple[str, str]:
    match = _SCHEME.match(text)
    # "example.com:8080/x" also matches the scheme pattern; a scheme never has a dot and is
    # never followed by a digit, so treat those as "no scheme".
    if match is None or "." in match.group(1) or text[match.end() : match.end() + 1].isdigit():
        if match is not None and match.group(1).lower() in ALLOWED_SCHEMES:
            # "http:127.0.0.1/" is http://127.0.0.1/ to a browser.
            _refuse_hidden_address(text[match.end() :], _NO_SLASHES)
        raise InvalidURL(
            f"{shortened(text)!r} has no scheme; write the URL in full, starting with http:// or https://."
        )
    scheme = match.group(1).lower()
    if scheme not in ALLOWED_SCHEMES:
        raise InvalidURL(f"only http and https URLs can be fetched; {scheme}: URLs are not accepted.")
    return scheme, text[match.end() :]


def _split_port(authority: str) -> tuple[str, int | None]:
    if authority.startswith("["):
        close = authority.find("]")
        if close == -1:
            raise InvalidURL("the URL has an IPv6 address without its closing ']'.")
        host_text, after = authority[: close + 1], authority[close + 1 :]
        if after and not after.startswith(":"):
            raise InvalidURL("the URL has unexpected text after its IPv6 address.")
        port_text = after[1:] if after else None
    else:
        host_text, sep, port_text_raw = authority.partition(":")
        port_text = port_text_raw if sep else None
    if not port_text:  # absent, or "host:" which means the default port
        return host_text, None
    if not set(port_text) <= _DIGITS or len(port_text) > 5 or not 0 < int(port_text) <= 65535:
        raise InvalidURL(f"{shortened(port_text, 20)!r} is not a valid port number (1 to 65535).")
    return host_text, int(port_text)


def _parse_host(host_text: str) -> tuple[str, IPAddress | None]:
    """The canonical host for the URL, and its IP address when it is a literal."""
    if not host_text:
        raise InvalidURL("the URL has no host name.")
    if host_text.startswith("["):
        return _parse_ipv6_literal(host_text)

    # Browsers percent-decode the host and apply IDNA mapping (which turns full-width digits and
    # dots into ASCII) before deciding whether it is an IPv4 address; do the same.
    try:
        decoded = unquote_to_bytes(host_text).decode("utf-8")
    except UnicodeError:  # bad percent-escapes, or a lone surrogate that cannot be encoded at all
        raise InvalidURL("the URL's host is not valid UTF-8 after percent-decoding.") from None
    host = _to_ascii(decoded)

    ipv4 = _parse_ipv4(host)
    if ipv4 is not None:
        return str(ipv4), ipv4
    if not set(host) <= _HOST_CHARS:
        raise InvalidURL(f"the host name {shortened(decoded)!r} contains characters that are not allowed.")
    if host.startswith(".") or ".." in host:
        raise InvalidURL(f"the host name {shortened(decoded)!r} has an empty label.")
    return host, None


def _parse_ipv6_literal(host_text: str) -> tuple[str, ipaddress.IPv6Address]:
    """An IPv6 literal, zone id included: "[fe80::1%25eth0]" (RFC 6874) or "[fe80::1%eth0]".

    A zone id is kept rather than refused here: it names a local interface, so the address
    policy refuses it as a blocked address (what it is), and an operator who allows private
    destinations can still reach a link-local host. In the URL it is written the RFC 6874 way.
    """
    literal = host_text[1:-1]
    address_text, percent, zone = literal.partition("%")
    if percent:
        # "%25" is the percent-encoded "%" of RFC 6874, which wins over reading it as a bare
        # "%" (also accepted, as curl does) followed by a zone starting with "25".
        zone = zone.removeprefix("25")
        if not zone or not set(zone) <= _ZONE_CHARS:
            raise InvalidURL(f"{shortened(host_text)!r} has an IPv6 zone id that is not valid.")
        address_text = f"{address_text}%{zone}"
    try:
        address = ipaddress.IPv6Address(address_text)
    except ValueError:
        raise InvalidURL(f"{shortened(host_text)!r} is not a valid IPv6 address.") from None
    return address.compressed.replace("%", "%25", 1), address


def _to_ascii(host: str) -> str:
    if host.isascii():
        return host.lower()
    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        if mapped.isascii():
            return mapped.lower()
        return idna.encode(mapped, uts46=False).decode("ascii")
    except idna.IDNAError as exc:
        raise InvalidURL(
            f"the host name {shortened(host)!r} is not a valid international name ({exc})."
        ) from None


def _parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Apply the WHATWG URL Standard's IPv4 parser; None when the host is a domain name.

    Per the standard, a host whose last label is a number (decimal, 0x-hex or 0-octal) IS an
    IPv4 address, and must parse as one or the URL is invalid: "127.1", "0x7f.0.0.1",
    "2130706433" and "0177.0.0.1" all mean 127.0.0.1.
    """
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # one trailing dot is allowed
    last = parts[-1]
    if not (last and set(last) <= _DIGITS) and _ipv4_number(last) is None:
        return None
    if len(parts) > 4:
        raise InvalidURL(f"{host!r} looks like an IPv4 address but has more than four parts.")
    numbers = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            raise InvalidURL(f"{host!r} looks like an IPv4 address but {part!r} is not a number.")
        numbers.append(number)
    if any(number > 255 for number in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise InvalidURL(f"{host!r} looks like an IPv4 address but is out of range.")
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _ipv4_number(part: str) -> int | None:
    if not part:
        return None
    if part[:2].lower() == "0x":
        digits, radix, allowed = part[2:], 16, _HEX_DIGITS
    elif len(part) > 1 and part[0] == "0":
        digits, radix, allowed = part[1:], 8, _OCT_DIGITS
    else:
        digits, radix, allowed = part, 10, _DIGITS
    if not digits:
        return 0  # "0x" alone is zero in the standard
    if not set(digits) <= allowed:
        return None
    return int(digits, radix)


def resolve_redirect(current: httpx.URL, location: str) -> httpx.URL:
    """The URL a Location header points to, parsed as strictly as a URL from the user.

    Absolute and scheme-relative targets go through parse_url untouched; relative ones are joined
    to the current URL first. A target starting with a backslash is refused: browsers read
    "/\\evil.example" as "//evil.example", RFC 3986 as a path on the current host.
    """
    target = location.strip()
    if not target:
        raise InvalidURL("the redirect's Location header is empty.")
    if "\\" in target[:2]:
        _refuse_hidden_address(target, _BACKSLASH_TARGET)
        raise InvalidURL("the redirect target starts with a backslash, which is ambiguous.")
    if target.startswith("//"):
        return parse_url(f"{current.scheme}:{target}")
    if _SCHEME.match(target):
        return parse_url(target)
    return parse_url(urljoin(str(current), target))


# Why a URL that is refused as ambiguous is refused, and how it still names an address.
_NO_SLASHES = "URLs must have '//' right after the scheme"
_BACKSLASH = "backslashes are not accepted in the host part of a URL"
_EMPTY_HOST = "URLs must name their host right after '//'"
_BACKSLASH_TARGET = "a redirect target starting with a backslash is ambiguous"
_CREDENTIALS = "URLs with embedded credentials are not accepted"
_AS_RFC = "the host of this URL for RFC 3986 parsers"
_AS_BROWSER = "the host of this URL for browsers (they read '\\' as '/' and need no '//' after the scheme)"
_AS_CREDENTIALS = "hidden behind embedded credentials (user@host)"


class HiddenAddress(BlockedAddress, InvalidURL):
    """A URL refused as malformed or ambiguous that, read as some parser would, reaches a
    non-public address.

    Both are true, so it is both errors: code that handles InvalidURL keeps working, and the code
    reported to the caller (BlockedAddress's, first in the MRO) says where the URL was aimed.
    """


def _host_readings(after_scheme: str) -> list[tuple[str, str]]:
    """The host text an RFC 3986 parser and a browser would each take from what follows "http:"."""
    readings = [(_authority_host(after_scheme[2:]), _AS_RFC)] if after_scheme.startswith("//") else []
    # WHATWG URL Standard, special schemes: "\" is "/" and any run of slashes starts the authority.
    readings.append((_authority_host(after_scheme.replace("\\", "/").lstrip("/")), _AS_BROWSER))
    return readings


def _authority_host(rest: str) -> str:
    ends = [position for position in (rest.find(char) for char in "/?#") if position != -1]
    authority = rest[: min(ends, default=len(rest))].rpartition("@")[2]
    if authority.startswith("["):
        return authority[: authority.find("]") + 1]
    return authority.partition(":")[0]


def _refuse_hidden_address(after_scheme: str, refused_because: str, disguise: str | None = None) -> None:
    """Raise HiddenAddress when some reading of an ambiguous URL's host is a non-public literal.

    Judged by the built-in rules, not the operator's allowances: the URL is refused either way,
    and telling the caller it pointed at 127.0.0.1 is the useful part. Host names are not
    resolved here; such URLs are refused as invalid.
    """
    for host_text, reading in _host_readings(after_scheme):
        try:
            _, address = _parse_host(host_text)
        except InvalidURL:
            continue
        rule = None if address is None else BUILT_IN_POLICY.refusal(address)
        if address is not None and rule is not None:
            raise HiddenAddress(f"{refusal_text(address, rule)}, {disguise or reading}; {refused_because}.")
