"""Every actor module, imported once the broker is set (see lookout.broker.setup)."""

from types import ModuleType

from lookout.actors import history, jobs, maintenance, notify, watches

MODULES: list[ModuleType] = [jobs, maintenance, notify, watches, history]
