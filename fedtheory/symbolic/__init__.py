"""Sympy helpers for the symbolic derivations."""
