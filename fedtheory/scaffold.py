"""Deprecated: the claim skeleton of ``fedtheory new`` is now :mod:`fedtheory.claim_skeleton`
(this name is SCAFFOLD's, the algorithm: :mod:`fedtheory.algorithms.scaffold`). Every name is
still served here, with a ``DeprecationWarning`` (:mod:`fedtheory.deprecation`)."""

from fedtheory.deprecation import moved

moved(globals())
