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
