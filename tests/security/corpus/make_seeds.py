"""Rebuild the fuzzing seed pages in this folder from the shared extraction benchmark.

The seeds are real pages with their words scrambled: the fuzzer needs real-world markup (odd
nesting, unclosed tags, inline JSON, legacy charsets), not the pages' prose, which belongs to the
sites that published it and may not be redistributed here. So every run of letters in text,
comments, prose-carrying attributes and JSON strings is replaced by a pseudo-word of the same
length (ASCII) or a shuffle of its own letters (other scripts), long scripts and styles are cut
short, and the markup, class names, digits, punctuation and entity references stay byte for
byte. Each page keeps its original character encoding.

    .venv/bin/python tests/security/corpus/make_seeds.py [path/to/shared/bench/extraction]
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import string
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parents[3] / "shared" / "bench" / "extraction"

# (seed file name, source file under the benchmark folder, encoding, why this page)
SEEDS: tuple[tuple[str, str, str, str], ...] = (
    ("article-ko.html", "zyte/pages/0ec95c7261d1", "utf-8", "Korean news article"),
    ("article-ru.html", "zyte/pages/c4a3637c6696", "utf-8", "Russian article, WordPress"),
    ("article-en.html", "zyte/pages/1ee91d1fce", "utf-8", "English news article"),
    ("docs.html", "wcxb-dev/html/0682.html.gz", "utf-8", "MediaWiki documentation, many <pre> blocks"),
    ("forum.html", "wcxb-dev/html/0555.html.gz", "utf-8", "phpBB forum thread"),
    ("forum-latin1.html", "wcxb-dev/html/0525.html.gz", "iso-8859-1",
     "vBulletin thread, ISO-8859-1, XHTML doctype, table layout"),
    ("product.html", "wcxb-dev/html/2898.html.gz", "utf-8", "product page with spec tables"),
    ("listing.html", "wcxb-dev/html/0259.html.gz", "utf-8", "news listing, repeated cards"),
    ("app-shell.html", "wcxb-dev/html/0091.html.gz", "utf-8", "Nuxt page with embedded hydration data"),
)  # fmt: skip

SCRIPT_KEEP = 400
"""Characters of each script or style kept (scrambled): enough to look like one, not the site's code."""

# Attributes whose values are prose or addresses; the rest (class, id, role, type, style,
# colspan...) drive the extractor's decisions and are kept as they are.
_PROSE_ATTRIBUTES = frozenset(
    {"alt", "title", "content", "value", "placeholder", "label", "summary", "abbr", "cite", "href",
     "src", "srcset", "action", "poster", "longdesc", "background"}
)  # fmt: skip
# Words kept as they are so that URLs and declarations still look like URLs and declarations.
_KEEP_WORDS = frozenset(
    {"http", "https", "www", "com", "org", "net", "html", "php", "jpg", "png", "if", "endif"}
)
_TOKEN = re.compile(
    r"(?P<comment><!--.*?(?:-->|$))"
    r"|(?P<raw><(?P<raw_name>script|style)\b[^>]*>)(?P<raw_body>.*?)(?P<raw_end></(?P=raw_name)\s*>|$)"
    r"|(?P<tag></?[A-Za-z!?][^>]*>)",
    re.S | re.I,
)
_ATTRIBUTE = re.compile(r"""(\s)([^\s=>/"']+)(\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)""")
_WORD_IN_TEXT = re.compile(r"&#?\w+;|([^\W\d_]+)")
_WORD_IN_CODE = re.compile(r"\\u[0-9A-Fa-f]{4}|\\.|([^\W\d_]+)")
_JSON_TYPES = ("json",)


def _pseudo_word(word: str) -> str:
    if word.lower() in _KEEP_WORDS:
        return word
    rng = random.Random(hashlib.sha256(word.encode("utf-8", "surrogatepass")).digest())
    if word.isascii():
        letters = [rng.choice(string.ascii_lowercase) for _ in word]
        return "".join(new.upper() if old.isupper() else new for old, new in zip(word, letters, strict=True))
    shuffled = list(word)
    rng.shuffle(shuffled)
    return "".join(shuffled)


def _scramble(text: str, pattern: re.Pattern[str] = _WORD_IN_TEXT) -> str:
    return pattern.sub(lambda m: _pseudo_word(m.group(1)) if m.group(1) else m.group(0), text)


def _scramble_json(value: Any) -> Any:
    if isinstance(value, str):
        return _scramble(value)
    if isinstance(value, list):
        return [_scramble_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _scramble_json(item) for key, item in value.items()}
    return value


def _script_body(open_tag: str, body: str, name: str) -> str:
    is_json = name == "script" and any(kind in open_tag.lower() for kind in _JSON_TYPES)
    if is_json:
        try:
            data = json.loads(body)
        except ValueError:
            pass
        else:
            # "</" inside a string would end the script element early.
            return json.dumps(_scramble_json(data), ensure_ascii=False).replace("</", "<\\/")
    # Cut scripts and styles short, without "<": a cut "<!--" inside a script changes how the
    # rest of the page tokenizes, which the real page did not do.
    return _scramble(body[:SCRIPT_KEEP], _WORD_IN_CODE).replace("<", " ")


def _tag(tag: str) -> str:
    if tag.lower().startswith("<meta") and ("http-equiv" in tag.lower() or "charset" in tag.lower()):
        return tag  # the page's encoding declaration must keep working

    def attribute(match: re.Match[str]) -> str:
        space, name, equals, value = match.groups()
        lowered = name.lower()
        if lowered in _PROSE_ATTRIBUTES or lowered.startswith(("data-", "on", "aria-")):
            value = _scramble(value)
        return f"{space}{name}{equals}{value}"

    return _ATTRIBUTE.sub(attribute, tag)


def skeleton(page: str) -> str:
    """``page`` with its prose scrambled and its scripts cut short; the markup unchanged."""
    out: list[str] = []
    position = 0
    for match in _TOKEN.finditer(page):
        out.append(_scramble(page[position : match.start()]))
        position = match.end()
        if match.group("comment"):
            out.append(_scramble(match.group("comment")))
        elif match.group("raw"):
            body = _script_body(match.group("raw"), match.group("raw_body"), match.group("raw_name").lower())
            out.append(_tag(match.group("raw")) + body + match.group("raw_end"))
        else:
            out.append(_tag(match.group("tag")))
    out.append(_scramble(page[position:]))
    return "".join(out)


def _source_file(source: Path, relative: str) -> Path:
    path = source / relative
    if path.exists():
        return path
    matches = sorted(path.parent.glob(path.name + "*"))  # ids may be given by prefix
    if len(matches) != 1:
        raise SystemExit(f"{relative}: expected one matching page, found {len(matches)}")
    return matches[0]


def main(argv: list[str]) -> int:
    source = Path(argv[1]) if len(argv) > 1 else DEFAULT_SOURCE
    total = 0
    for name, relative, encoding, _why in SEEDS:
        raw = gzip.decompress(_source_file(source, relative).read_bytes())
        seed = skeleton(raw.decode(encoding, errors="surrogateescape")).encode(
            encoding, errors="surrogateescape"
        )
        (HERE / name).write_bytes(seed)
        total += len(seed)
        print(f"{name:20} {len(raw):8} -> {len(seed):8} bytes")
    print(f"{'total':20} {'':8}    {total:8} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
