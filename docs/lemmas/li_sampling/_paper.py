"""The paper the lemmas of this folder come from (docs/lemmas.md: "Your own paper")."""

PAPER = {
    "key": "li2020-fedavg-noniid",
    "short": "Li et al. 2020",
    "title": "On the Convergence of FedAvg on Non-IID Data",
    "authors": ["Xiang Li", "Kaixuan Huang", "Wenhao Yang", "Shusen Wang", "Zhihua Zhang"],
    "kind": "conference",
    "venue": "International Conference on Learning Representations (ICLR)",
    "year": 2020,
    "arxiv": "1907.02189",
    "notes": "Appendix B: the lemmas of partial participation, Scheme I (S_t: K indices drawn "
             "i.i.d. with replacement by p_1, ..., p_N; the server averages the K local "
             "models with weight 1/K each). The statements of Lemma 4 (unbiasedness) and "
             "Lemma 5 (the variance bound (4/K) eta_t^2 E^2 G^2, assuming eta_t "
             "non-increasing and eta_t <= 2 eta_{t+E}) are the claims' own transcriptions; no "
             "lines are quoted because the paper's text was not at hand to copy them word "
             "for word (add them under 'quotes' from arXiv:1907.02189 before sending a page).",
}
