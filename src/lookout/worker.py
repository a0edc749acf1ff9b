"""The entry module for `dramatiq` and `periodiq`: sets the broker from the environment."""

from lookout import broker, loops
from lookout.settings import Settings

_settings = Settings.from_env()
loops.install(_settings)  # before dramatiq's event-loop thread makes its loop
broker.setup(_settings)
