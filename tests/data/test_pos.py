"""Part-of-speech data (prismlib.data.pos): .pos files, the treebank sample and CoNLL-2000; their
known counts.

Every fixture is written into ``tmp_path`` in the format of the real distribution;
``PRISMLIB_DATA`` and the repository root are pointed into ``tmp_path`` (the ``data_root``
fixture of ``tests/conftest.py``) so that a real ``<repo>/data`` never leaks into a test.
The tests marked ``data`` (``real_data.reads_real_data``, last in the file) read the real
dataset through ``PRISMLIB_DATA`` (else ``<repo>/../shared/data``) and skip, naming the missing
file, when it is absent (``python -m prismlib data fetch NAME``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from data_fixtures import write_zip
from hypothesis import given
from hypothesis import strategies as st
from real_data import need, reads_real_data

from prismlib.data import pos

POS_FILE = """

======================================

[ Pierre/NNP Vinken/NNP ]
,/, will/MD join/VB
[ the/DT board/NN ]
./.

[ He/PRP ]
said/VBD ``/``
[ prices/NNS ]
rose/VBD 7\\/8/CD ./.

''/'' [ The/DT firm/NN ]

[ that/WDT ]
gained/VBD ./.
======================================
Byline/NNP Here/RB
======================================
[ Odd/JJ|NN ]
./.
"""


def test_parse_pos_text_sentences_tags_escapes() -> None:
    sents = pos.parse_pos_text(POS_FILE)
    words = [[w for w, _ in s] for s in sents]
    assert words == [
        ["Pierre", "Vinken", ",", "will", "join", "the", "board", "."],
        ["He", "said", "``", "prices", "rose", "7/8", ".", "''"],  # closing quote stays
        ["The", "firm", "that", "gained", "."],  # blank line inside a sentence
        ["Byline", "Here"],  # a ==== line ends a sentence
        ["Odd", "."],
    ]
    assert sents[1][5] == ("7/8", "CD")
    assert sents[4][0] == ("Odd", "JJ")


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("dog/NN", ("dog", "NN")),
        ("1\\/2/CD", ("1/2", "CD")),
        ("and\\/or/CC", ("and/or", "CC")),
        ("\\*\\*/SYM", ("**", "SYM")),
        ("x/VBG|NN", ("x", "VBG")),
    ],
)
def test_parse_token(token: str, expected: tuple[str, str]) -> None:
    assert pos.parse_token(token) == expected


@pytest.mark.parametrize("token", ["noslash", "/NN", "word/"])
def test_parse_token_rejects(token: str) -> None:
    with pytest.raises(ValueError):
        pos.parse_token(token)


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Z", "C")), min_size=1).filter(lambda w: "\\" not in w),
    st.sampled_from(["NN", "CD", ".", "''", "-LRB-", "PRP$"]),
)
def test_parse_token_roundtrip(word: str, tag: str) -> None:
    assert pos.parse_token(word.replace("/", "\\/") + "/" + tag) == (word, tag)


def test_treebank_sample_and_tagged_dir_share_reader(data_root: Path, tmp_path: Path) -> None:
    second = "[ It/PRP ]\nfell/VBD ./.\n"
    write_zip(
        data_root / "nltk_data" / "corpora" / "treebank.zip",
        {
            "treebank/tagged/wsj_0002.pos": second.encode(),
            "treebank/tagged/wsj_0001.pos": POS_FILE.encode(),
            "treebank/combined/wsj_0001.mrg": b"( (S (NP-SBJ (NNP Pierre))) )",
        },
    )
    docs = pos.load_treebank_sample()
    assert [d.doc_id for d in docs] == ["wsj_0001", "wsj_0002"]
    assert len(docs[0].sentences) == 5 and docs[1].n_tokens == 3
    tagged = tmp_path / "tagged" / "pos" / "wsj"
    (tagged / "00").mkdir(parents=True)
    (tagged / "01").mkdir()
    (tagged / "00" / "wsj_0001.pos").write_text(POS_FILE)
    (tagged / "01" / "wsj_0102.pos").write_text(second)
    own = pos.load_tagged_dir(tagged)
    assert [d.doc_id for d in own] == ["wsj_0001", "wsj_0102"]
    assert own[0].sentences == docs[0].sentences
    with pytest.raises(FileNotFoundError, match="tagged/pos/wsj"):
        pos.load_tagged_dir(tmp_path / "empty")


def test_conll2000_one_document_per_split(data_root: Path) -> None:
    train = "Confidence NN B-NP\nin IN B-PP\n. . O\n\nHe PRP B-NP\nwent VBD B-VP\n\n"
    write_zip(
        data_root / "nltk_data" / "corpora" / "conll2000.zip",
        {"conll2000/train.txt": train.encode(), "conll2000/test.txt": b"A DT B-NP\n"},
    )
    doc = pos.load_conll2000("train")
    assert doc.doc_id == "conll2000-train"
    assert doc.sentences == [
        [("Confidence", "NN"), ("in", "IN"), (".", ".")],
        [("He", "PRP"), ("went", "VBD")],
    ]
    assert pos.load_conll2000("test").n_tokens == 1
    with pytest.raises(ValueError):
        pos.load_conll2000("valid")


@reads_real_data
def test_treebank_sample_counts() -> None:
    need("nltk_data/corpora/treebank.zip")
    docs = pos.load_treebank_sample()
    assert len(docs) == 199
    assert docs[0].doc_id == "wsj_0001" and docs[-1].doc_id == "wsj_0199"
    assert sum(len(d.sentences) for d in docs) == 3_934  # NLTK's parsed .mrg: 3,914
    assert sum(d.n_tokens for d in docs) == 94_200
    assert docs[0].sentences[0][:2] == [("Pierre", "NNP"), ("Vinken", "NNP")]
    tags = Counter(t for d in docs for _, t in d.tokens())
    assert "|" not in "".join(tags) and len(tags) == 45


@reads_real_data
def test_conll2000_counts() -> None:
    need("nltk_data/corpora/conll2000.zip")
    train, test = pos.load_conll2000("train"), pos.load_conll2000("test")
    assert (len(train.sentences), train.n_tokens) == (8_936, 211_727)
    assert (len(test.sentences), test.n_tokens) == (2_012, 47_377)
