"""Local fake search providers that speak each provider's real wire format, on 127.0.0.1."""
