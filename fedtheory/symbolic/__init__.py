"""Sympy derivations of the seeds' formulas, one module per derivation.

The tools they share live in :mod:`~fedtheory.symbolic.indicators` (moments of participation
indicators and random signs) and :mod:`~fedtheory.symbolic.enumeration` (exact expectations
over every participation pattern); import a name from the module that defines it.
"""
