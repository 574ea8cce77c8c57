"""The Penn Treebank LM corpus (prismlib.data.ptb): tokens, vocabulary, the corpus; its known counts.

Every fixture is written into ``tmp_path`` in the format of the real distribution;
``PRISMLIB_DATA`` and the repository root are pointed into ``tmp_path`` (the ``data_root``
fixture of ``tests/conftest.py``) so that a real ``<repo>/data`` never leaks into a test.
The tests marked ``data`` (``real_data.reads_real_data``, last in the file) read the real
dataset through ``PRISMLIB_DATA`` (else ``<repo>/../shared/data``) and skip, naming the missing
file, when it is absent (``python -m prismlib data fetch NAME``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from real_data import need, reads_real_data

from prismlib.data import ptb


def test_ptb_tokens_vocab_corpus(data_root: Path) -> None:
    (data_root / "ptb").mkdir()
    (data_root / "ptb" / "ptb.train.txt").write_text(" b a N \n a <unk> \n")
    (data_root / "ptb" / "ptb.valid.txt").write_text(" a b \n")
    (data_root / "ptb" / "ptb.test.txt").write_text(" N \n")
    assert ptb.load_ptb("train") == ["b", "a", "N", "<eos>", "a", "<unk>", "<eos>"]
    assert ptb.ptb_vocab() == ["b", "a", "N", "<eos>", "<unk>"]
    corpus = ptb.load_ptb_corpus()
    assert corpus.train.dtype == np.int64
    assert corpus.valid.tolist() == [1, 0, 3]
    assert [corpus.vocab[i] for i in corpus.test] == ["N", "<eos>"]
    with pytest.raises(ValueError):
        ptb.load_ptb("dev")


@reads_real_data
def test_ptb_counts() -> None:
    need("ptb/ptb.train.txt", "ptb/ptb.valid.txt", "ptb/ptb.test.txt")
    corpus = ptb.load_ptb_corpus()
    assert len(corpus.vocab) == 10_000 == len(set(corpus.vocab))
    assert {"<unk>", "<eos>", "N"} <= set(corpus.vocab)
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (929_589, 73_760, 82_430)
    assert corpus.train.max() == 9_999
