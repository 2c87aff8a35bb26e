"""Web search: one port (base.py), one small adapter per provider, and the fallback chain."""
