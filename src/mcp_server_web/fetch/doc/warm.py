"""Imported by the conversion workers' fork server before it forks any (CONVERSION_PRELOAD in
fetch/service.py): what a conversion reads from files on first use is read here, once, and every
worker starts with it (shared copy-on-write) instead of reading it on its first page. Workers
that grew are retired after their job, so new ones start often.

- the block model (block_model.json): about 20 ms;
- trafilatura's jusText stoplists, which it reads on its first fallback to jusText: about 150 ms.
"""

from __future__ import annotations

import trafilatura.external

from mcp_server_web.fetch.doc.block_model import shipped_model

shipped_model()
if getattr(trafilatura.external, "JT_STOPLIST", ()) is None:
    trafilatura.external.jt_stoplist_init()
