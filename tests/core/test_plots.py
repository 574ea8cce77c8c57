"""The figures several notebooks draw (prismlib.plots), checked by what they put on the axes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from prismlib.plots import (  # noqa: E402
    BAND_PALETTE,
    condition_bars,
    filter_responses,
    score_heatmap,
    set_theme,
    spectral_profile_figure,
)

BANDS = ("LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH")


@pytest.fixture(autouse=True)
def _close():
    set_theme()
    yield
    plt.close("all")


def test_brick_wall_gains_are_steps_and_the_legend_sits_below_the_panels():
    n = 16
    gain = lambda lo, hi: np.isin(np.arange(n), np.arange(lo, hi)).astype(float)  # noqa: E731
    brick = [gain(0, 1), gain(1, 3), gain(3, 6), gain(6, 10), gain(10, 16)]
    smooth = [np.linspace(0, 1, n)] * 5
    fig = filter_responses({"brick-wall": brick, "smooth": smooth}, BANDS, n)
    left, right = fig.axes
    assert {line.get_drawstyle() for line in left.get_lines()} == {"steps-mid"}
    assert {line.get_drawstyle() for line in right.get_lines()} == {"default"}
    assert [line.get_color() for line in left.get_lines()] == [BAND_PALETTE[b] for b in BANDS]
    np.testing.assert_array_equal(left.get_lines()[1].get_xdata(), np.arange(1, n))  # index 0 left out (log axis)
    np.testing.assert_array_equal(left.get_lines()[1].get_ydata(), brick[1][1:])
    assert left.get_legend() is None and right.get_legend() is None and len(fig.legends) == 1
    fig.canvas.draw()
    legend_top = fig.legends[0].get_window_extent().y1
    assert all(legend_top <= ax.get_window_extent().y0 for ax in fig.axes)  # clear of the curves


def test_spectral_profile_draws_the_white_noise_reference_beside_the_model():
    shares = pd.DataFrame([[0.1, 0.1, 0.2, 0.2, 0.4]] * 3, index=[0, 1, 2], columns=list(BANDS))
    units = pd.DataFrame(np.random.default_rng(0).dirichlet(np.ones(5), size=8).T, index=list(BANDS))
    noise = pd.Series([0.002, 0.014, 0.05, 0.19, 0.744], index=list(BANDS))
    fig = spectral_profile_figure(shares, units, noise, title="t")
    bars, boxes = fig.axes
    dashed = [line for line in bars.get_lines() if line.get_linestyle() == "--"]
    np.testing.assert_allclose(sorted(line.get_ydata()[0] for line in dashed), np.cumsum(noise.to_numpy())[:-1])
    refs = [c for c in boxes.collections if c.get_label() == "white noise"]
    assert len(refs) == 1 and len([s for c in boxes.collections for s in c.get_segments()]) == 5
    np.testing.assert_allclose(sorted(s[0][1] for c in boxes.collections for s in c.get_segments()), sorted(noise))
    fig.canvas.draw()
    legend = bars.get_legend().get_window_extent()
    assert legend.x0 >= bars.get_window_extent().x1  # the legend sits right of the bars, not over them
    assert [t.get_text() for t in bars.get_legend().get_texts()] == [*BANDS[::-1], "white noise (cumulative)"]


def test_condition_bars_hatch_the_controls_and_mark_the_majority_class():
    rows = []
    for task, conds in (("pos", ("ORIG", *BANDS)), ("topic", ("ORIG", *BANDS, "DC"))):
        for i, c in enumerate((*conds, "majority")):
            rows.append({"task": task, "condition": c, "accuracy": 10.0 + i, "ci_low": 9.0 + i, "ci_high": 11.0 + i})
    fig = condition_bars(pd.DataFrame(rows), ("pos", "topic"), ("ORIG", *BANDS), {"pos": "POS"}, controls=("DC",))
    pos, topic = fig.axes
    assert len(pos.patches) == 6 and len(topic.patches) == 7
    assert [p.get_hatch() for p in topic.patches][-1] == "//" and not any(p.get_hatch() for p in pos.patches)
    assert pos.get_title() == "POS" and topic.get_title() == "topic"
    assert [t.get_text() for t in topic.get_xticklabels()][-1] == "DC"
    assert topic.get_lines()[-1].get_ydata()[0] == pytest.approx(17.0)  # the majority class of topic


def test_score_heatmap_outlines_each_band_s_own_task():
    scores = pd.DataFrame([[1.2, 0.1], [0.0, 0.8]], index=["LOW", "HIGH"], columns=["topic", "pos"])
    labels = scores.map(lambda v: f"{v:.1f}")
    fig = score_heatmap(scores, labels, {"LOW": "topic", "HIGH": "pos", "MID": "swda"}, colorbar="score")
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert sorted(p.get_xy() for p in boxes) == [(0, 0), (1, 1)]  # MID has no row: nothing drawn
    assert sorted(t.get_text() for t in ax.texts) == ["0.0", "0.1", "0.8", "1.2"]
    # a cell without a score is labelled on grey, not left blank
    scores.loc["HIGH", "pos"] = np.nan
    labels.loc["HIGH", "pos"] = "no scale"
    ax = score_heatmap(scores, labels, {}).axes[0]
    assert "no scale" in [t.get_text() for t in ax.texts]
    assert not any(line.get_visible() for line in ax.get_xgridlines() + ax.get_ygridlines())
