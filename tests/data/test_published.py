"""The published numbers (prismlib.data.published): every constant has its source, the
module imports nothing of the library, and the numbers the notebooks read agree with
each other where the slides print the same number twice."""

from __future__ import annotations

import ast
import math
from pathlib import Path

from prismlib.data import published

PUBLIC = sorted(n for n in vars(published) if n.isupper())


def test_every_constant_names_its_source_and_every_source_a_constant():
    assert set(published.SOURCES) == set(PUBLIC) - {"SOURCES"}
    assert all(published.SOURCES[n].split(",")[0] in ("slides", "Prism", "ICLR 2021") for n in published.SOURCES)


def test_the_module_imports_nothing_of_the_library():
    tree = ast.parse(Path(published.__file__).read_text())
    imported = [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert sorted(imported) == ["__future__", "math"]


def test_the_slides_baseline_is_the_same_in_experiments_1_to_3():
    assert published.EXP1[("baseline", None)] == published.SLIDES_BASELINE == 61.70
    for key in [("layerwise", 20), ("layerwise", 70)]:  # experiment 3 repeats experiment 2's first-layer rows
        assert published.EXP3[key] == published.EXP2[key]
    assert published.EXP2[("layerwise", 20)] == 61.71 and published.EXP2[("layerwise", 200)] == 68.25


def test_experiment_4_rows_and_titles():
    assert published.EXP4["baseline"] == (61.40, "61.42 +/- 1.52", "61.64 +/- 0.28")
    assert published.EXP4["pareto"][0] == 59.52 and all(math.isnan(published.EXP4[k][0]) for k in ("published", "official"))
    fixed = {f"layer2 X={X}": f"{i}. L2: bias log({X}-1)" for i, X in enumerate((5, 10, 20, 30, 70), start=2)}
    assert {k: published.EXP4_TITLES[k] for k in fixed} == fixed
    assert set(published.EXP4_TITLES) == set(published.EXP4)
    assert published.ICLR_PTB_TEST_PPL == {"baseline": 58.98, "official": 57.58}


def test_the_titles_cover_every_variant_of_their_experiment():
    for numbers, titles in [
        (published.EXP1, published.EXP1_TITLES),
        (published.EXP2, published.EXP2_TITLES),
        (published.EXP3, published.EXP3_TITLES),
    ]:
        assert {v for v, _ in numbers} <= set(titles)


def test_table_3a_rows_are_the_five_bands_in_order():
    assert [row[0] for row in published.TABLE_3A] == ["LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH"]
    assert [row[3] for row in published.TABLE_3A] == ["0–1", "2–8", "9–33", "34–129", "130–511"]


def test_table_1_and_appendix_b_as_printed():
    assert published.TABLE_1 == {
        ("topic", "baseline"): 32.21, ("topic", "prism"): 51.01,
        ("swda", "baseline"): 47.09, ("swda", "prism"): 54.02,
        ("pos", "baseline"): 95.86, ("pos", "prism"): 94.41,
    }  # fmt: skip
    assert published.APP_B1 == {("LOW", "topic"): 45.1, ("HIGH", "topic"): 5.3, ("HIGH", "pos"): 84.1, ("LOW", "pos"): 16.8,
                                ("LOW", "swda"): None, ("HIGH", "swda"): None}  # fmt: skip
    assert published.APP_B2 == {"pos": 94.6, "swda": 41.8, "topic": 28.9}
    assert published.APP_B3 == {"topic": 45.2, "swda": 51.8, "pos": 94.0}


def test_section_4s_numbers_are_printed_once_per_source():
    """Each of Table 1 and App. B.1-B.3 covers the three tasks (B.1: both sectors of each),
    and App. B.2's original BERT is below Table 1's continued-trained BERT on every task
    (the paper's 'does not harm'), App. B.3's every-layer prism below Table 1's prism."""
    tasks = {"topic", "swda", "pos"}
    assert {t for t, _ in published.TABLE_1} == tasks and {m for _, m in published.TABLE_1} == {"baseline", "prism"}
    assert set(published.APP_B1) == {(s, t) for s in ("LOW", "HIGH") for t in tasks}
    assert set(published.APP_B2) == set(published.APP_B3) == tasks
    assert all(published.APP_B2[t] < published.TABLE_1[(t, "baseline")] for t in tasks)
    assert all(published.APP_B3[t] < published.TABLE_1[(t, "prism")] for t in tasks)
    for name in ("TABLE_1", "APP_B1", "APP_B2", "APP_B3"):
        assert published.SOURCES[name].startswith("Prism, " + ("Table 1" if name == "TABLE_1" else f"App. B.{name[-1]}"))
