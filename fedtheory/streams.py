r"""Named random streams: the one derivation of every generator a check or an experiment uses.

A stream is named by ``(seed, key, name)``; its generator is PCG64 seeded with

.. math:: \mathrm{SeedSequence}\big([\,\text{seed},\ \mathrm{crc32}(\text{key}),\
          \mathrm{crc32}(\text{name})\,]\big),

so the numbers a stream gives depend on nothing else (not on what ran before it). The claim
machinery's :meth:`fedtheory.claimkit.core.Context.rng` is this derivation with the claim id as
the key; pure computations (:mod:`fedtheory.experiments`) that need the streams of a claim
take a seed and a key, or a ``streams`` callable, instead of a context.

>>> a = stream_rng(0, "ocs.demo", "x").random()
>>> b = stream_rng(0, "ocs.demo", "x").random()
>>> a == b, a == stream_rng(0, "ocs.demo", "y").random()
(True, False)
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["seed_sequence", "stable_hash", "stream_rng"]


def stable_hash(text: str) -> int:
    """CRC-32 of the UTF-8 text: the same on every platform and interpreter run.

    >>> stable_hash("")
    0
    """
    return zlib.crc32(text.encode("utf-8"))


def seed_sequence(seed: int, key: str, stream: str = "") -> np.random.SeedSequence:
    """The seed sequence of the stream ``stream`` of ``key`` (a claim id) under ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence([int(seed), stable_hash(key), stable_hash(stream)])


def stream_rng(seed: int, key: str, stream: str = "") -> np.random.Generator:
    """A fresh PCG64 generator for the stream (see the module docstring)."""
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, key, stream)))
