"""Section 4's text and arms (prismlib.prism.arms): the corpus and its description."""

from __future__ import annotations

import pytest
import torch


def test_mlm_corpus_names_the_article_of_every_evaluation_input():
    import numpy as np

    from prismlib.prism import MLMCorpus

    ids = torch.zeros(3, 8, dtype=torch.long)
    corpus = MLMCorpus(ids, ids, ["t"], ["a", "b"], "", eval_article=[0, 0, 1])
    assert corpus.eval_article.dtype == np.int64 and corpus.eval_article.tolist() == [0, 0, 1]
    with pytest.raises(ValueError, match="article of each of the 3 evaluation inputs"):
        MLMCorpus(ids, ids, ["t"], ["a"], "", eval_article=[0, 0])


def test_articles_line_counts_each_source_and_shows_a_few_titles():
    from prismlib.prism import articles_line

    names = [f"wikitext-2/valid: W{i}" for i in range(60)] + [f"wikitext-103/test: T{i}" for i in range(30)]
    line = articles_line(names)
    assert line == "90 articles: 60 wikitext-2/valid, 30 wikitext-103/test; e.g. W0; W1; W2; ..."
    assert articles_line(names[:2]) == "2 articles: 2 wikitext-2/valid; e.g. W0; W1"
    assert articles_line([]) == "0 articles"


def _fake_text(monkeypatch):
    """WikiText replaced by named one-line articles, tokenized to one input per article."""
    from types import SimpleNamespace

    import prismlib.data
    import prismlib.data.wikitext
    from prismlib.prism import mlm_training

    def load(name: str, split: str):
        return [SimpleNamespace(title=f"{name}-{split}-{i}", text=f"{name} {split} {i}") for i in range(60)]

    def chunk(tokenizer, texts, seq_len, stride=None):
        return torch.arange(len(texts) * 4).reshape(len(texts), 4), list(range(len(texts)))

    monkeypatch.setattr(prismlib.data, "load_wikitext", load)
    monkeypatch.setattr(prismlib.data.wikitext, "detokenize_wikitext", lambda t: t)
    monkeypatch.setattr(mlm_training, "chunk_tokens", chunk)


@pytest.mark.parametrize("stop_articles", [0, 6])
def test_the_stopping_text_is_held_out_of_training_and_of_fig5(monkeypatch, stop_articles):
    from dataclasses import replace

    from prismlib.prism import mlm_corpus
    from prismlib.profiles import get_profile

    _fake_text(monkeypatch)
    p = get_profile("cpu")
    p = replace(p, prism=p.prism.updated(stop_articles=stop_articles, round_steps=25 if stop_articles else 0))
    corpus = mlm_corpus(p, tokenizer=None)
    train, stop, held = set(corpus.train_articles), set(corpus.stop_articles), set(corpus.eval_articles)
    assert len(stop) == stop_articles and len(corpus.stop) == stop_articles
    assert all(name.startswith("wikitext2/valid") for name in stop)
    assert not (train & stop) and not (train & held) and not (stop & held)
    assert len(train) + len(stop) + len(held) == 120  # every offline article has one role
    assert ("Stopping text" in corpus.description) == bool(stop_articles)


def _sanity(stop: str | None, final_gain: float):
    """An MLMSanity of one arm on 20 held-out inputs of 20 articles: ``final_gain`` nats per
    token better than the encoder before training; trained to a stop that ended ``stop``."""
    from types import SimpleNamespace

    import numpy as np

    from prismlib.anneal import AnnealState
    from prismlib.prism import TrainResult, mlm_sanity

    rng = np.random.default_rng(0)
    counts = np.full(20, 50.0)
    head = -5.0 * counts + rng.normal(0, 1, 20)
    final = head + final_gain * counts + rng.normal(0, 1, 20)
    anneal = None if stop is None else AnnealState(rounds=9, scale=1 / 16, best=100.0, decayed_at=(4, 7), stop=stop)
    result = TrainResult(steps=225, anneal=anneal, heldout=[(0, 6.0, 1.0), (25, 5.5, 1.0)], best_step=25, previous_step=25)
    model = SimpleNamespace(result=result, record={"heldout_head": (head, counts), "heldout_final": (final, counts)})
    data = SimpleNamespace(heldout=torch.randint(4, 30, (20, 60), generator=torch.Generator().manual_seed(0)))
    unigram = np.full(30, np.log(1 / 30))
    return mlm_sanity({"prism": model}, data, np.arange(20), unigram, 3, [0, 1, 2], seed=0, n_boot=200)


def test_the_sanity_gates_of_training_to_a_stop():
    ok = _sanity("rule", 0.5)
    assert ok.converged_gate("prism", "P").passed and "decays at rounds [4, 7]" in ok.converged_gate("prism", "P").detail
    assert ok.improved_gate("prism", "P").passed and ok.improved["prism"].effect == pytest.approx(0.5, abs=0.01)
    capped = _sanity("cap", -0.5)
    assert not capped.converged_gate("prism", "P").passed and "not converged: stopped: cap" in capped.converged_gate("prism", "P").detail
    assert not capped.improved_gate("prism", "P").passed  # training made the held-out loss worse
    fixed = _sanity(None, 0.5)
    assert not fixed.converged_gate("prism", "P").passed and "fixed budget" in fixed.converged_gate("prism", "P").detail
    assert not fixed.improved_gate("nothing", "P").passed
    curves = ok.curves()
    assert curves.step.tolist() == [0, 25] and curves.kept.tolist() == [False, True] and curves.earlier.tolist() == [False, True]


def test_an_arms_key_hashes_its_whole_recipe_flat_and_nothing_beside_it():
    """Every field of the recipe (its anneal schedule's included) moves an arm's key; the settings
    beside it (probes, Fig. 5, checkpoints, threads) never do: no list of fields to put in."""
    from dataclasses import fields

    from prismlib.prism import ArmJob
    from prismlib.profiles import PrismSettings, get_profile

    S = get_profile("cpu").prism
    base = ArmJob("prism", "minilm", "cpu", 0, S, "d")
    flat = S.training.flat()
    assert base.describe()["settings"] == flat and {"recipe", "decay_factor", "decay_patience"} <= set(flat)
    changed = {"train_text": "wikitext103-train", "recipe": "full", "steps": 800, "round_steps": 40, "attention_dropout": 0.5,
               "train_inputs": 7}  # fmt: skip
    needs = {"recipe": {"attention_dropout": None, "stop_articles": 0}}
    for name, value in flat.items():
        other = changed[name] if name in changed else not value if isinstance(value, bool) else value * 2 + 1
        start = S.updated(**needs.get(name, {}))
        keys = {ArmJob("prism", "minilm", "cpu", 0, s, "d").key for s in (start, start.updated(**{name: other}))}
        assert len(keys) == 2, name
    beside = {f.name: getattr(S, f.name) for f in fields(PrismSettings) if f.name != "training"}
    assert set(beside) == set("checkpoint_every every_layer sizes span eval_inputs eval_stride eval_batch bootstrap threads".split())
    others = {"every_layer": False, "sizes": {}, "span": (0, 1), "threads": 3}
    same = S.updated(**{k: others.get(k, v * 2 + 1 if isinstance(v, int) else v) for k, v in beside.items()})
    assert same != S and ArmJob("prism", "minilm", "cpu", 0, same, "d").key == base.key
