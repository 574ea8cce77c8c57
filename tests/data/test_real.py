"""Known counts of the real datasets, read through PRISMLIB_DATA.

The data directory is ``$PRISMLIB_DATA`` when set, else ``<repo>/../shared/data``
when it exists. Each test skips, saying which file is missing, when its dataset is
absent (fetch it with ``python -m prismlib data fetch NAME``).
"""

from __future__ import annotations

from collections import Counter

import pytest
from real_data import REAL_DIR, need

from prismlib.data import catalogue, newsgroups, pos, ptb, registry, swda, wikitext
from prismlib.runs.data import main as data_main

pytestmark = [pytest.mark.data, pytest.mark.slow, pytest.mark.usefixtures("real_data_dir")]


def test_verify_checksummed_files() -> None:
    checked = 0
    for statuses in registry.verify(data_dir=REAL_DIR).values():
        for s in statuses:
            f = next(f for f in catalogue.get_dataset(s.dataset).files if f.relpath == s.relpath)
            if f.sha256 is not None and s.state != "missing":
                assert s.ok, s.detail
                checked += 1
            elif s.state != "missing":
                assert s.ok, s.detail  # structural checks pass too
    if checked == 0:
        pytest.skip(f"no checksummed file in {REAL_DIR}")


def test_ptb_counts() -> None:
    need("ptb/ptb.train.txt", "ptb/ptb.valid.txt", "ptb/ptb.test.txt")
    corpus = ptb.load_ptb_corpus()
    assert len(corpus.vocab) == 10_000 == len(set(corpus.vocab))
    assert {"<unk>", "<eos>", "N"} <= set(corpus.vocab)
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (929_589, 73_760, 82_430)
    assert corpus.train.max() == 9_999


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


def test_conll2000_counts() -> None:
    need("nltk_data/corpora/conll2000.zip")
    train, test = pos.load_conll2000("train"), pos.load_conll2000("test")
    assert (len(train.sentences), train.n_tokens) == (8_936, 211_727)
    assert (len(test.sentences), test.n_tokens) == (2_012, 47_377)


def test_swda_counts_and_damsl() -> None:
    need(
        "swb1_dialogact_annot.tar.gz",
        "swda_splits/ws97-train-convs.list",
        "swda_splits/ws97-val-convs.list",
        "swda_splits/ws97-test-convs.list",
    )
    assert len(swda.conversation_members(REAL_DIR / swda.TAR_RELPATH)) == 1_155
    splits = {s: swda.load_swda(s) for s in swda.SPLITS}
    assert {s: len(c) for s, c in splits.items()} == {"train": 1_115, "val": 21, "test": 19}
    ids = [c.conv_id for convs in splits.values() for c in convs]
    assert len(set(ids)) == 1_155
    assert swda.derive_validation_ids(REAL_DIR) == sorted(c.conv_id for c in splits["val"])
    utts = {s: [u for c in convs for u in c.utterances] for s, convs in splits.items()}
    assert {s: len(u) for s, u in utts.items()} == {"train": 215_514, "val": 3_569, "test": 4_523}
    for u in utts.values():  # every utterance, '+' continuations included, is in the 42
        assert all(x.damsl in swda.DAMSL_TAGS for x in u)
    assert {x.damsl for x in utts["train"]} == set(swda.DAMSL_TAGS)
    assert sum(x.act_tag == "+" for x in utts["train"]) > 0


def test_newsgroups_counts() -> None:
    need("20news-bydate.tar.gz")
    train, test = newsgroups.load_newsgroups("train"), newsgroups.load_newsgroups("test")
    assert (len(train), len(test)) == (11_314, 7_532)
    assert {d.newsgroup for d in train} == {d.newsgroup for d in test} == set(newsgroups.NEWSGROUPS)
    assert len({d.doc_id for d in train}) == 11_314
    assert all(d.header and d.split == "train" for d in train)


def test_wikitext103_test_articles() -> None:
    need("wikitext-103-raw/wiki.test.raw")
    articles = wikitext.load_wikitext("wikitext103", "test")
    assert len(articles) == 60
    assert articles[0].title == "Robert Boulter" and articles[-1].title == "The Hustler ( film )"
    k_filter = next(a for a in articles if a.title == "Constant k filter")
    assert "= 1 rad / s and a nominal impedance k =" in k_filter.text  # fragment, not a title
    assert not any("\r" in a.text for a in articles)


def test_wikitext2_articles() -> None:
    need("wikitext-2/wiki.valid.tokens", "wikitext-2/wiki.test.tokens")
    valid = wikitext.load_wikitext("wikitext2", "valid")
    test = wikitext.load_wikitext("wikitext2", "test")
    assert (len(valid), len(test)) == (60, 60)
    assert valid[0].title == "Homarus gammarus"


# one file of each kind: plain text with a published digest, zip, tar.gz, raw text and a
# conversation-id list checked by structure, whose digests only SHA256SUMS knows
CORRUPTED = (
    "ptb/ptb.test.txt",
    "nltk_data/corpora/treebank.zip",
    "swb1_dialogact_annot.tar.gz",
    "wikitext-103-raw/wiki.test.raw",
    "swda_splits/ws97-test-convs.list",
)


@pytest.mark.parametrize("relpath", CORRUPTED)
def test_verify_catches_one_flipped_byte(relpath: str, tmp_path, capsys) -> None:
    """A copy of the data directory (links to every file) with one byte of ``relpath``
    changed: ``data verify`` must report it bad and exit 1, naming the directory."""
    need(relpath, "SHA256SUMS")
    for path in REAL_DIR.rglob("*"):
        if path.is_file():
            link = tmp_path / path.relative_to(REAL_DIR)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(path)
    target = tmp_path / relpath
    data = bytearray(target.read_bytes())
    target.unlink()
    middle = len(data) // 2
    if relpath.endswith(".list"):  # another well-formed conversation id: only the digest can tell
        line = data.index(b"sw", middle)
        data[line + 3] = ord("9") if data[line + 3] != ord("9") else ord("8")
    else:
        data[middle] ^= 0x01
    target.write_bytes(bytes(data))
    name = catalogue.dataset_of(relpath).name
    status = next(s for s in registry.verify([name], data_dir=tmp_path)[name] if s.relpath == relpath)
    assert status.state == "bad", status.detail
    assert data_main(["verify", name, "--data-dir", str(tmp_path)]) == 1
    assert f"data directory: {tmp_path}" in capsys.readouterr().out
