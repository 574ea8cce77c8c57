"""Section 4's text (prismlib.prism.corpus): the corpus, its roles and its description."""

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
