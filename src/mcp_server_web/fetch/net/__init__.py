"""The network half of fetch: the one outbound path for user-given URLs.

Strict URL parsing (urls), the address policy (addresses), resolving once and vetting every
answer (resolution), connections pinned to the vetted address (transport, proxy,
pinned_proxy), the client that follows and re-vets redirects under size and time caps (client),
content decoding (decode) and robots.txt (robots). Nothing here knows what a document is; other
ways of getting a document (a browser, a provider's extract endpoint) use this same policy.
"""
