"""The figure helpers shared by the plotting modules (fedtheory.plotting)."""

import numpy as np
import pytest

from fedtheory.plotting import errorbar_points, label_axes, plt


def test_label_axes_sets_scales_labels_title_and_legend():
    fig, ax = plt.subplots()
    ax.plot([1.0, 10.0], [1.0, 100.0], label="line")
    errorbar_points(ax, [2.0, 5.0], [4.0, 25.0], [0.5, 1.0], color="C1", label="points")
    label_axes(ax, "x label", "y label", "a title", log="xy", title_size=9, legend_size=8)
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("x label", "y label",
                                                                  "a title")
    assert ax.title.get_fontsize() == 9
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == ["line", "points"]
    # the error bars span mean -/+ half-width
    segments = ax.containers[0].lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 1] for s in segments], [[3.5, 4.5], [24.0, 26.0]])
    plt.close(fig)


def test_label_axes_linear_by_default_and_rejects_bad_log():
    fig, ax = plt.subplots()
    ax.plot([1.0, 2.0], [1.0, 2.0], label="line")
    label_axes(ax, "x", "y", "t")
    assert (ax.get_xscale(), ax.get_yscale()) == ("linear", "linear")
    with pytest.raises(ValueError, match="log must be '', 'x', 'y' or 'xy', got 'z'"):
        label_axes(ax, "x", "y", "t", log="z")
    plt.close(fig)
