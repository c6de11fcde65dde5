"""The verdict each registered claim is expected to reach with the quick preset and seed 0.

This pins findings: a claim that was refuted stays refuted unless someone shows why the seed
is right after all, and a confirmed claim that starts failing is a regression.
"""

EXPECTED: dict[str, str] = {
}
