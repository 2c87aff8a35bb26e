"""Tokens of each text, in o200k_base (the encoding of OpenAI's GPT-4o family), by bpe-openai,
whose wheel carries the encoding (nothing is downloaded): stdin {"texts": {key: text}}, stdout
{key: count}."""

from __future__ import annotations

import bpe_openai
from plan import emit, read_plan

if __name__ == "__main__":
    encoding = bpe_openai.get_encoding("o200k_base")
    emit({key: len(encoding.encode(text)) for key, text in read_plan()["texts"].items()})
