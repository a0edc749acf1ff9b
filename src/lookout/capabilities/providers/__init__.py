"""The outside services verbs call: Nominatim and Google Places (maps), SearXNG (web search).

Each speaks its provider's public protocol against a configured base URL, so a deployment points
at the public service or at its own instance. Every call goes through `fetch.call_provider`, which
reaches only the configured host.
"""

from __future__ import annotations
