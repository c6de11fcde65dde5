"""The paper the worked lemmas of this folder come from (docs/lemmas.md: "Your own paper").

``fedtheory errata --claims docs/lemmas --from REPORT.json`` makes its page and LaTeX snippets
as for the seed papers. The declaration is read as literals, never run: a ``PAPER`` dict (or
``Paper(...)`` with keyword literals) of title, authors, venue, year, link and the lines it
prints (``quotes``: place -> text). Each claim's ``seed_ref`` is its place in this paper.
"""

PAPER = {
    "key": "hetero-steps",
    "short": "hetero steps",
    "title": "Where FedAvg with Heterogeneous Local Steps Converges: Two Worked Lemmas",
    "authors": ["The fedtheory authors"],
    "kind": "notes",
    "venue": "fedtheory documentation, docs/lemmas.md",
    "year": 2026,
    "notes": "The lemmas restate, on quadratics, the objective inconsistency of FedNova "
             "(Wang, Liu, Liang, Joshi and Poor, NeurIPS 2020, arXiv:2007.07481).",
    "quotes": {
        "Lemma 1": r"With $\tau_i$ local steps of size $\eta$ on "
                   r"$f_i(x) = \frac{a_i}{2}(x - c_i)^2$, unbiased FedAvg converges in "
                   r"expectation to $\tilde x = \frac{\sum_i w_i(1-(1-\eta a_i)^{\tau_i})c_i}"
                   r"{\sum_i w_i(1-(1-\eta a_i)^{\tau_i})}$.",
        "Lemma 2": r"Heterogeneous local steps do not move the limit: FedAvg still converges "
                   r"in expectation to the minimiser "
                   r"$x^\star = \frac{\sum_i w_i a_i c_i}{\sum_i w_i a_i}$ of $f$.",
    },
}
