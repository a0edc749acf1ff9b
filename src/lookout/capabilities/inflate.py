"""Bounded decompression of response bodies (gzip, deflate), so a small bomb cannot expand."""

from __future__ import annotations

import zlib

ACCEPT_ENCODING = "gzip, deflate"
_AUTO_HEADER = 32 + zlib.MAX_WBITS  # zlib or gzip, detected from the header


class TooLarge(Exception):
    """The body is larger than allowed."""


class BadEncoding(Exception):
    """The body is not valid for its Content-Encoding."""


class Inflater:
    """Accumulates a body, decompressing as it arrives and stopping past `max_bytes` of output."""

    def __init__(self, content_encoding: str, max_bytes: int) -> None:
        encoding = content_encoding.strip().lower()
        if encoding not in {"", "identity", "gzip", "x-gzip", "deflate"}:
            raise BadEncoding(f"unsupported Content-Encoding {content_encoding!r}")
        self._compressed = encoding not in {"", "identity"}
        self._decoder: zlib._Decompress | None = None
        self._max = max_bytes
        self._out = bytearray()

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        if not self._compressed:
            self._append(chunk)
            return
        decoder = self._decoder or self._start(chunk)
        try:
            data = decoder.decompress(chunk, self._max - len(self._out) + 1)
        except zlib.error as exc:
            raise BadEncoding(f"the compressed body is corrupt ({exc})") from None
        self._append(data)
        if decoder.unconsumed_tail:
            raise TooLarge

    def finish(self) -> bytes:
        if self._decoder is not None:
            self._append(self._decoder.flush())
        return bytes(self._out)

    def _start(self, first: bytes) -> zlib._Decompress:
        # Some servers send raw deflate without the zlib header that HTTP requires.
        looks_wrapped = first[:1] == b"\x1f" or (
            len(first) > 1 and first[0] & 0x0F == 8 and int.from_bytes(first[:2], "big") % 31 == 0
        )
        self._decoder = zlib.decompressobj(_AUTO_HEADER if looks_wrapped else -zlib.MAX_WBITS)
        return self._decoder

    def _append(self, data: bytes) -> None:
        if len(self._out) + len(data) > self._max:
            raise TooLarge
        self._out += data
