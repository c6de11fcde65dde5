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
             "models with weight 1/K each).",
    "quotes": {
        "Lemma 4": r"(Unbiased sampling scheme). If $t+1 \in \mathcal{I}_E$, for Scheme I and "
                   r"Scheme II, we have $\mathbb{E}_{S_t}(\overline{\mathbf{w}}_{t+1}) = "
                   r"\overline{\mathbf{v}}_{t+1}$.",
        "Lemma 5": r"(Bounding the variance). For $t+1 \in \mathcal{I}_E$, assume that "
                   r"$\eta_t$ is non-increasing and $\eta_t \le 2\eta_{t+E}$ for all $t \ge 0$. "
                   r"If $K$ clients are sampled by Scheme I, then the expected difference "
                   r"between $\overline{\mathbf{v}}_{t+1}$ and $\overline{\mathbf{w}}_{t+1}$ is "
                   r"bounded by $\mathbb{E}_{S_t}\|\overline{\mathbf{v}}_{t+1} - "
                   r"\overline{\mathbf{w}}_{t+1}\|^2 \le \frac{4}{K}\eta_t^2 E^2 G^2$.",
    },
}
