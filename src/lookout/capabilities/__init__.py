"""Capabilities ("verbs"), layer 2. Importing this package registers every verb in `registry`.

Imports only foundations (layer 1) and its layer-2 siblings (db, schema): a verb knows nothing
of who calls it (see CONTRIBUTING.md, "Layers").
"""

from __future__ import annotations

from lookout.capabilities import maps, web

__all__ = ["maps", "web"]
