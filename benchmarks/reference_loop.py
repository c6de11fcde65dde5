"""The reference the engine is measured against: a simulation written as a research script
would be (one replica, a Python loop over rounds and over clients, a numpy vector per client).

It runs FedAvg (average of the participants) or U-MIFA on a diagonal quadratic
f_i(x) = 1/2 (x - c_i)^T diag(a_i) (x - c_i), with Bernoulli(p_i) participation, tau local
steps of SGD with additive Gaussian noise E||xi||^2 = sigma2, and the server step
x <- x - lr * G. ``python benchmarks/reference_loop.py`` times one small run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def reference_run(
    hessians: np.ndarray,
    centers: np.ndarray,
    p: np.ndarray,
    rounds: int,
    lr: float,
    local_steps: int = 1,
    sigma2: float = 0.0,
    rule: str = "fedavg",
    seed: int = 0,
    x0: np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """Simulate one replica; return the final iterate and the number of client updates."""
    n, d = centers.shape
    rng = np.random.default_rng(seed)
    x = np.zeros(d) if x0 is None else np.array(x0, dtype=float)
    table = [np.zeros(d) for _ in range(n)]
    noise_scale = np.sqrt(sigma2 / d)
    client_rounds = 0
    for _t in range(rounds):
        updates = {}
        for i in range(n):
            if rng.random() < p[i]:
                y = x.copy()
                delta = np.zeros(d)
                for _k in range(local_steps):
                    g = hessians[i] * (y - centers[i])
                    if sigma2 > 0:
                        g = g + noise_scale * rng.standard_normal(d)
                    delta = delta + g
                    y = y - lr * g
                updates[i] = delta
                client_rounds += 1
        if rule == "fedavg":
            G = sum(updates.values()) / len(updates) if updates else np.zeros(d)
        elif rule == "umifa":
            for i, delta in updates.items():
                table[i] = delta / p[i] - (1 / p[i] - 1) * table[i]
            G = sum(table) / n
        else:
            raise ValueError(f"rule must be 'fedavg' or 'umifa', got {rule!r}")
        x = x - lr * G
    return x, client_rounds


def reference_client_gradients(hessians: np.ndarray, centers: np.ndarray, y: np.ndarray,
                               clients: np.ndarray) -> np.ndarray:
    """Row k: a_{c_k} * (y_k - c_{c_k}), written as a research script would (fancy indexing,
    a temporary per operation)."""
    return hessians[clients] * (y - centers[clients])


def reference_loss(problem, x: np.ndarray) -> np.ndarray:
    """f(x) = sum_i w_i f_i(x) as the sum over clients (an (R, n, d) temporary)."""
    return problem.client_losses(x) @ problem.weights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--tau", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--p", type=float, default=1.0)
    ap.add_argument("--sigma2", type=float, default=1.0)
    ap.add_argument("--rule", default="fedavg")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    A = rng.uniform(0.1, 1.0, (args.n, args.d))
    c = rng.standard_normal((args.n, args.d))
    t0 = time.perf_counter()
    _, cr = reference_run(A, c, np.full(args.n, args.p), args.rounds, 0.1, args.tau,
                          args.sigma2, args.rule)
    dt = time.perf_counter() - t0
    print(f"reference: {cr} client-rounds in {dt:.2f} s = {cr / dt:,.0f} client-rounds/s")


if __name__ == "__main__":
    main()
