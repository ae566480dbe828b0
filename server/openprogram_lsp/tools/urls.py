"""The host a URL reaches: what ``web_fetch`` stays on and what a fetch rule names."""

from __future__ import annotations

from urllib.parse import urlsplit


def url_host(url: str) -> str | None:
    """The host a URL reaches, lowercased, with its port when not the scheme's default (None:
    not an http(s) URL with a host)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower().rstrip(".")
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    default = 443 if parts.scheme.lower() == "https" else 80
    return host if port in (None, default) else f"{host}:{port}"
