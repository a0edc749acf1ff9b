"""Secrets at rest: values sealed with AES-256-GCM under a key derived from LOOKOUT_SECRET_KEY.

Each purpose gets its own key (HKDF info), and each sealed value is bound to a context (e.g. the
row it belongs to) so a ciphertext copied onto another row does not open there.

`cryptography`'s primitives load with the first value sealed or opened, not with this module: a
process that never reads a stored secret (a worker none of whose watches notifies a webhook target
or uses an MCP connector) does not hold its Rust extension. Measured from a production install:
`import lookout.worker` 74.0 -> 67.9 MiB RSS (2026-12-04).
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from lookout import errors

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_VERSION = b"\x01"
_NONCE_BYTES = 12
_TAG_BYTES = 16


@functools.cache
def _cipher(secret_key: str, purpose: str) -> AESGCM:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    kdf = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=f"lookout/{purpose}/v1".encode()
    )
    return AESGCM(kdf.derive(secret_key.encode("utf-8")))


def seal(secret_key: str, purpose: str, plaintext: bytes, *, context: bytes) -> bytes:
    """`plaintext` encrypted and authenticated: version byte + nonce + ciphertext and tag."""
    nonce = os.urandom(_NONCE_BYTES)
    sealed = _cipher(secret_key, purpose).encrypt(nonce, plaintext, context)
    return _VERSION + nonce + sealed


def unseal(secret_key: str, purpose: str, sealed: bytes, *, context: bytes) -> bytes:
    """The plaintext of `seal`; Conflict when it cannot be opened (key changed, tampered)."""
    if not sealed.startswith(_VERSION) or len(sealed) < 1 + _NONCE_BYTES + _TAG_BYTES:
        raise _unreadable()
    nonce, body = sealed[1 : 1 + _NONCE_BYTES], sealed[1 + _NONCE_BYTES :]
    from cryptography.exceptions import InvalidTag

    try:
        return _cipher(secret_key, purpose).decrypt(nonce, body, context)
    except InvalidTag:
        raise _unreadable() from None


def _unreadable() -> errors.Conflict:
    return errors.Conflict(
        "A stored secret can no longer be read (was LOOKOUT_SECRET_KEY changed?); "
        "delete and re-create what holds it."
    )
