"""Deprecated: the certificates a report carries are read and checked in
:mod:`fedtheory.certify.reported_certificates` (``checks`` is the claims' statistics-to-evidence
step, :mod:`fedtheory.claimkit.checks`). Every name is still served here, with a
``DeprecationWarning`` (:mod:`fedtheory.deprecation`)."""

from fedtheory.deprecation import moved

moved(globals())
