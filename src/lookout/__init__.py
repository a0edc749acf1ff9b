"""Lookout: the live web for people and agents, and keeping watch over it."""

__version__ = "0.1.0"
