"""The entry module for `dramatiq` and `periodiq`: sets the broker from the environment."""

from lookout import broker
from lookout.settings import Settings

broker.setup(Settings.from_env())
