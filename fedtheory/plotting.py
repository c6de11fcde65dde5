"""Figure helpers: a headless backend and saving one figure as PNG and PDF."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "save_figure"]


def save_figure(fig: plt.Figure, path: Path | str, formats: tuple[str, ...] = ("png", "pdf"),
                dpi: int = 130) -> list[str]:
    """Save ``fig`` as ``path.<fmt>`` for each format, close it, and return the paths."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt in formats:
        target = path.with_suffix(f".{fmt}")
        fig.savefig(target, dpi=dpi, bbox_inches="tight")
        out.append(str(target))
    plt.close(fig)
    return out
