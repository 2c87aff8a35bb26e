"""Bounds on remote strings that stand outside any fence in structured output, shared by the tools."""

TITLE_LIMIT = 300
"""Most characters of a structured title (web_fetch's page, each web_search result): the site chose
it and it stands outside the fence, so it is one clean line (boundary.one_line) like every remote
string outside."""
SNIPPET_LIMIT = 1000
"""Most characters of a search result's snippet, for the same reason."""
