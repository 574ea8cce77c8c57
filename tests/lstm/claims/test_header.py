"""The start of every work-B notebook (prismlib.lstm.claims.header): the profile and PTB test
tokens, and the reference table written beside the trained runs (a row per baseline seed)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd

from prismlib.lstm import WorkBStart, baseline_references, ptb_test_ids, trained_with_references, work_b_start
from prismlib.lstm.claims import header
from prismlib.profiles import get_profile


@dataclass(frozen=True)
class Spec:
    variant: str
    seed: int


def _refs() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"model": "unigram", "valid_ppl": 700.0, "test_ppl": 650.0, "test_tokens": 500},
            {"model": "bigram (Kneser-Ney)", "valid_ppl": 300.0, "test_ppl": 280.0, "test_tokens": 500},
        ]
    )


def _runs() -> dict:
    run = lambda v, t: SimpleNamespace(val_ppl=v, test_ppl=t, source="checkpoint", provenance=None)  # noqa: E731
    return {Spec("baseline", 0): run(150.0, 140.0), Spec("layerwise", 0): run(160.0, 150.0), Spec("baseline", 1): run(151.0, 141.0)}


def test_ptb_test_ids_cut_the_profile_s_test_tokens_or_keep_all():
    corpus = SimpleNamespace(test=np.arange(100))
    assert np.array_equal(ptb_test_ids(corpus, SimpleNamespace(test_tokens=30)), np.arange(30))
    assert np.array_equal(ptb_test_ids(corpus, SimpleNamespace(test_tokens=None)), np.arange(100))


def test_baseline_references_add_a_row_per_baseline_run_only():
    table = baseline_references(_refs(), _runs())
    assert table.model.tolist() == ["unigram", "bigram (Kneser-Ney)", "baseline seed 0", "baseline seed 1"]
    assert table.valid_ppl.tolist()[2:] == [150.0, 151.0] and table.test_ppl.tolist()[2:] == [140.0, 141.0]
    assert (table.test_tokens == 500).all()


def test_trained_with_references_trains_the_specs_and_writes_lm_references(monkeypatch, capsys):
    P = get_profile("smoke")
    calls, saved = [], {}

    def trained(specs, s, profile_name, executor, device):
        calls.append((specs, s, profile_name, executor, device))
        return _runs()

    monkeypatch.setattr(header, "trained", trained)
    monkeypatch.setattr(header, "save_table", lambda df, name, profile: saved.update({(name, profile): df}))
    specs = list(_runs())
    runs = trained_with_references(specs, P, _refs(), "inline")
    assert runs == _runs() and calls == [(specs, P.lstm, P.job_profile, "inline", P.device)]
    assert capsys.readouterr().out == "3 trained models: 3 from local checkpoints\n"  # where the runs come from, in one line
    ((key, table),) = saved.items()
    assert key == ("lm_references", P.name) and table.model.tolist()[2:] == ["baseline seed 0", "baseline seed 1"]


def test_work_b_start_gives_the_profile_its_settings_ptb_and_the_test_tokens(monkeypatch):
    corpus = SimpleNamespace(test=np.arange(10**6), train=np.arange(5), valid=np.arange(5))
    themed = []
    monkeypatch.setattr(header, "load_ptb_corpus", lambda: corpus)
    monkeypatch.setattr(header, "set_theme", lambda: themed.append(True))
    start = work_b_start("smoke")
    P, S, c, ids = start
    assert isinstance(start, WorkBStart) and P.name == "smoke" and S is P.lstm and c is corpus and themed == [True]
    assert np.array_equal(ids, ptb_test_ids(corpus, S)) and (S.test_tokens is None or len(ids) == S.test_tokens)
