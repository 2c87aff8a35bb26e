"""The document half of fetch: bytes to text, with no network.

Content types (sniff), charsets, the HTML tree as a browser builds it (html_tree), main-content
extraction (extract, blocks, selection), Markdown and text rendering (render), PDF, data embedded
by JavaScript shells (embedded) and bot walls (challenge); convert is the entry that picks among
them for a response.
"""
