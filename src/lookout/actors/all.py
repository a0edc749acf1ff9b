"""Every actor module, imported once the broker is set (see lookout.broker.setup)."""

from types import ModuleType

from lookout.actors import maintenance

MODULES: list[ModuleType] = [maintenance]
