"""Experiment drivers (compute data; figure scripts plot it)."""
