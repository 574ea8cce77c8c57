"""Unit tests of prismlib.data on tiny files the tests write themselves (no real data).

Every fixture is written into ``tmp_path`` in the format of the real distribution;
``PRISMLIB_DATA`` and the repository root are pointed into ``tmp_path`` (the ``data_root``
fixture of ``tests/conftest.py``) so that a real ``<repo>/data`` never leaks into a test.
The catalogue, fetch / verify and the ``data`` command have their own files
(``test_catalogue.py``, ``test_registry.py``, ``tests/runs/test_data.py``).
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

import numpy as np
import pytest
from data_fixtures import WIKI_TEXT, FakeResponse, hf_rows, passes, use_catalogue, write_tar, write_zip
from hypothesis import given
from hypothesis import strategies as st

from prismlib.data import catalogue, datadir, download, newsgroups, pos, ptb, registry, swda, unpack, wikitext
from prismlib.data.catalogue import DataFile, Dataset, Download
from prismlib.data.datadir import ChecksumError, DataNotFoundError

# ---------------------------------------------------------------------------
# the data directory and locate


def test_data_dir_env_and_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(datadir.ENV_VAR, raising=False)
    monkeypatch.setattr(datadir, "REPO_ROOT", tmp_path / "repo")
    assert datadir.data_dir() == tmp_path / "repo" / "data"
    # the Makefile's rule: the offline copy beside the checkout when it has its SHA256SUMS
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert datadir.data_dir() == tmp_path / "repo" / "data"
    (tmp_path / "shared" / "data" / "SHA256SUMS").write_text("")
    assert datadir.data_dir() == tmp_path / "shared" / "data"
    monkeypatch.setenv(datadir.ENV_VAR, str(tmp_path))
    assert datadir.data_dir() == tmp_path


def test_relative_data_dir_cwd_then_repo_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(datadir, "REPO_ROOT", tmp_path / "repo")
    (tmp_path / "work" / "notebooks").mkdir(parents=True)
    (tmp_path / "work" / "copy").mkdir()
    monkeypatch.setenv(datadir.ENV_VAR, "copy")
    monkeypatch.chdir(tmp_path / "work")
    assert datadir.data_dir().resolve() == tmp_path / "work" / "copy"
    monkeypatch.chdir(tmp_path / "work" / "notebooks")
    assert datadir.data_dir() == tmp_path / "repo" / "copy"


def test_locate_finds_env_then_repo_data(data_root: Path, tmp_path: Path) -> None:
    repo_copy = tmp_path / "repo" / "data" / "ptb" / "ptb.test.txt"
    repo_copy.parent.mkdir(parents=True)
    repo_copy.write_text("a b\n")
    assert datadir.locate("ptb/ptb.test.txt") == repo_copy
    env_copy = data_root / "ptb" / "ptb.test.txt"
    env_copy.parent.mkdir()
    env_copy.write_text("a b\n")
    assert datadir.locate("ptb/ptb.test.txt") == env_copy


def test_locate_error_names_file_places_and_command(data_root: Path, tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError) as info:
        datadir.locate("swb1_dialogact_annot.tar.gz", "swda")
    assert isinstance(info.value, FileNotFoundError)
    msg = str(info.value)
    assert "swb1_dialogact_annot.tar.gz" in msg
    assert str(data_root / "swb1_dialogact_annot.tar.gz") in msg
    assert str(tmp_path / "repo" / "data" / "swb1_dialogact_annot.tar.gz") in msg
    assert "python -m prismlib data fetch swda" in msg
    assert "PRISMLIB_DATA" in msg
    # without the dataset's name the error points at the list of datasets
    with pytest.raises(DataNotFoundError, match="python -m prismlib data list"):
        datadir.locate("swb1_dialogact_annot.tar.gz")


# ---------------------------------------------------------------------------
# unpack: parquet rows back into lines


def test_lines_from_rows_restores_the_blank_lines() -> None:
    assert "".join(unpack.lines_from_rows(hf_rows(WIKI_TEXT), " \n")) == WIKI_TEXT
    assert list(unpack.lines_from_rows([None, "", "x\n"], " \n")) == [" \n", " \n", "x\n"]


# ---------------------------------------------------------------------------
# download, with urllib mocked (no network in tests)


def test_download_sends_its_own_user_agent(tmp_path: Path, monkeypatch) -> None:
    requests: list[urllib.request.Request] = []

    def urlopen(req, timeout):
        requests.append(req)
        return FakeResponse(200, b"abc", {"Content-Length": "3"})

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    path = download.download("https://example.invalid/a/b.zip", tmp_path, force=False)
    assert path == tmp_path / "b.zip" and path.read_bytes() == b"abc"
    # wikitext.smerity.com answers 403 to urllib's default User-Agent
    assert requests[0].get_header("User-agent") == download.USER_AGENT


# ---------------------------------------------------------------------------
# PTB


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


# ---------------------------------------------------------------------------
# POS: .pos files and CoNLL-2000

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


# ---------------------------------------------------------------------------
# SWDA


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("sd", "sd"), ("sd^e", "sd"), ("sd(^q)", "sd"), ("sv^r", "sv"), ("fx", "sv"),
        ("qy^d", "qy^d"), ("qw^d", "qw^d"), ("b^m", "b^m"), ("qy^d^c", "qy"),
        ("nn^e", "ng"), ("ny^e", "na"), ("nn^r", "nn"), ("qr", "qy"), ("qr^d", "qy"),
        ("fe", "ba"), ("ba^m@", "ba"), ("oo", "oo_co_cc"), ("co", "oo_co_cc"), ("cc^t", "oo_co_cc"),
        ("aap", "aap_am"), ("am", "aap_am"), ("arp", "arp_nd"), ("nd", "arp_nd"),
        ("o", 'fo_o_fw_"_by_bc'), ("fo", 'fo_o_fw_"_by_bc'), ("fw*", 'fo_o_fw_"_by_bc'),
        ('"', 'fo_o_fw_"_by_bc'), ("by", 'fo_o_fw_"_by_bc'), ("bc", 'fo_o_fw_"_by_bc'),
        ("^h", "^h"), ("^h@", "^h"), ("^q", "^q"), ("^2", "^2"), ("^g", "^g"),
        ("%@*", "%"), ("sd;qy^d", "sd"), ("bf,nn,o@", "bf"), ("qrr@", "qrr"), ("+", "+"),
    ],
)  # fmt: skip
def test_damsl_tag(raw: str, expected: str) -> None:
    assert swda.damsl_tag(raw) == expected


def test_damsl_tags_are_42_sorted() -> None:
    assert len(swda.DAMSL_TAGS) == 42 == len(set(swda.DAMSL_TAGS))
    assert list(swda.DAMSL_TAGS) == sorted(swda.DAMSL_TAGS)
    assert "+" not in swda.DAMSL_TAGS


def utt_file(lines: list[str]) -> str:
    header = "*x*x*x*\nFILENAME:\t1234_1000_1001\nTOPIC#:\t\t313\n\n"
    return header + "=" * 76 + "\n  \n\n" + "\n".join(lines) + "\n"


CONV = utt_file(
    [
        "+          A.1 utt1:  -- and so on /",
        "qy          B.2 utt1:  Have you had any snow? /",
        "",
        "sd^e          A.3 utt1: {F Uh, } we haven't, [ I, + I ] think. /",
        "b          @B.4 utt1:  Um. <laughter> /",
        " +          A.5 utt1:  -- before Christmas. /",
        "+          @@B.6 utt1:  # yeah # /",
    ]
)


def test_parse_utt_text_and_continuations() -> None:
    conv = swda.parse_utt_text(CONV, "sw1001")
    assert conv.conv_id == "sw1001"
    got = [(u.speaker, u.turn, u.index, u.act_tag, u.damsl) for u in conv.utterances]
    assert got == [
        ("A", 1, 1, "+", "+"),  # no earlier utterance of A: kept as '+', documented
        ("B", 2, 1, "qy", "qy"),
        ("A", 3, 1, "sd^e", "sd"),
        ("B", 4, 1, "b", "b"),
        ("A", 5, 1, "+", "sd"),  # same speaker's previous act, not B's 'b'
        ("B", 6, 1, "+", "b"),
    ]
    assert conv.utterances[2].text == "{F Uh, } we haven't, [ I, + I ] think. /"
    assert conv.utterances[2].plain_text == "Uh, we haven't, I, I think."
    assert conv.utterances[3].plain_text == "Um."


def test_parse_utt_text_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="line"):
        swda.parse_utt_text(utt_file(["sd  A.1 utt1: fine /", "this is not an utterance"]), "sw1")
    with pytest.raises(ValueError, match="====="):
        swda.parse_utt_text("header only\n", "sw1")


def write_swda(root: Path) -> None:
    convs = {f"sw{n}": utt_file([f"sd  A.1 utt1: conversation {n} /"]) for n in (2001, 2002, 2003, 2004)}
    write_tar(
        root / "swb1_dialogact_annot.tar.gz",
        {f"swb1_dialogact_annot/sw{n[2:4]}utt/sw_{i:04d}_{n[2:]}.utt": text.encode() for i, (n, text) in enumerate(convs.items())}
        | {"swb1_dialogact_annot/doc/manual.txt": b"manual"},
    )
    (root / "swda_splits").mkdir(parents=True)
    (root / "swda_splits" / "ws97-train-convs.list").write_text("sw2003\nsw2001\n")
    (root / "swda_splits" / "ws97-test-convs.list").write_text("sw2004\n")


def test_load_swda_and_derived_validation(data_root: Path) -> None:
    write_swda(data_root)
    assert swda.derive_validation_ids(data_root) == ["sw2002"]
    val = data_root / "swda_splits" / "ws97-val-convs.list"
    val.write_bytes(swda.validation_list(data_root))
    assert val.read_text() == "sw2002\n"
    train = swda.load_swda("train")
    assert [c.conv_id for c in train] == ["sw2003", "sw2001"]  # list order
    assert train[0].utterances[0].text == "conversation 2003 /"
    assert [c.conv_id for c in swda.load_swda("val")] == ["sw2002"]
    assert len(swda.load_conversations()) == 4
    with pytest.raises(ValueError):
        swda.load_swda("dev")


def test_fetch_derives_swda_val(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    remote = tmp_path / "remote"
    write_swda(remote)
    real = catalogue.DATASETS["swda"]
    files = tuple(f if not f.sources else DataFile(f.relpath, (Download((remote / f.relpath).as_uri()),), check=passes) for f in real.files)
    val = files[-1]
    files = files[:-1] + (DataFile(val.relpath, (), check=swda.check_id_list(1), derive=val.derive),)
    use_catalogue(monkeypatch, Dataset("swda", "x", "x", files))
    registry.fetch(["swda"])
    assert (data_root / "swda_splits" / "ws97-val-convs.list").read_text() == "sw2002\n"


# ---------------------------------------------------------------------------
# 20 Newsgroups


def test_load_newsgroups(data_root: Path) -> None:
    post = b"From: a@b.c\nSubject: caf\xe9\n\nBody line 1\n\nBody line 2\n"
    write_tar(
        data_root / "20news-bydate.tar.gz",
        {
            "20news-bydate-train/sci.med/100": post,
            "20news-bydate-train/sci.med/99": b"Subject: x\n\nshort\n",
            "20news-bydate-train/alt.atheism/5": b"Subject: y\n\nz\n",
            "20news-bydate-test/sci.med/7": b"Subject: t\n\nt\n",
        },
    )
    docs = newsgroups.load_newsgroups("train")
    assert [d.doc_id for d in docs] == ["alt.atheism/5", "sci.med/99", "sci.med/100"]
    d = docs[2]
    assert (d.newsgroup, d.split) == ("sci.med", "train")
    assert d.header == "From: a@b.c\nSubject: café"
    assert d.body == "Body line 1\n\nBody line 2\n"
    assert d.text == post.decode("latin-1")
    assert newsgroups.count_documents(data_root / "20news-bydate.tar.gz") == {"train": 3, "test": 1}
    assert len(newsgroups.NEWSGROUPS) == 20 and list(newsgroups.NEWSGROUPS) == sorted(newsgroups.NEWSGROUPS)
    with pytest.raises(ValueError):
        newsgroups.load_newsgroups("valid")


def test_newsgroups_structure_check_fails_on_wrong_counts(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "20news-bydate.tar.gz", {"20news-bydate-test/sci.med/1": b"x"})
    with pytest.raises(ChecksumError, match="11314"):
        newsgroups.check_archive(archive)


# ---------------------------------------------------------------------------
# WikiText

WIKI_LINES = [
    " = Alpha = ",
    " Alpha is a letter . ",
    " = = History = = ",
    " It was used . The cut @-@ off frequency is ωc ",
    " = 1 rad / s and impedance k = ",
    " 1 Ω . More text . ",
    " = = = Key = = = ",
    " Key ",
    " = Beta ( letter ) = ",
    " Beta follows . ",
]


def test_heading_level() -> None:
    assert wikitext.heading_level(" = Alpha = ") == 1
    assert wikitext.heading_level(" = = History = = \r") == 2
    assert wikitext.heading_level(" = = = Key = = = ") == 3
    assert wikitext.heading_level(" Bye = Athlete not required = ") == 0
    assert wikitext.heading_level(" = = = ") == 0
    assert wikitext.heading_level(" ") == 0


def expected_articles() -> list[wikitext.Article]:
    return [
        wikitext.Article(
            "Alpha",
            "Alpha is a letter .\n= = History = =\nIt was used . The cut @-@ off frequency is ωc\n"
            "= 1 rad / s and impedance k =\n1 Ω . More text .\n= = = Key = = =\nKey",
        ),
        wikitext.Article("Beta ( letter )", "Beta follows ."),
    ]


def test_split_articles_without_blank_lines_crlf() -> None:
    # the raw layout: CRLF endings, no blank separator lines; 'Beta' follows 'Key'
    # (a line that does not end a sentence) and is still a title
    lines = [ln + "\r" for ln in WIKI_LINES]
    assert list(wikitext.split_articles(lines)) == expected_articles()


def test_split_articles_with_blank_separators() -> None:
    lines = [" "]
    for ln in WIKI_LINES:
        # the tokens layout: headings between blank lines; the fragment is glued to text
        glued = ln.startswith(" = 1") or ln.startswith(" 1 Ω") or "ωc" in ln
        lines += [ln] if glued else [ln, " "]
    assert list(wikitext.split_articles(lines)) == expected_articles()


def test_is_title_rule() -> None:
    assert wikitext.is_title(None, " = A = ", " text . ")
    assert wikitext.is_title(" Key ", " = A = ", " A is . ")
    assert wikitext.is_title(" ends . ", " = A = ", " 1999 was . ")
    assert not wikitext.is_title(" frequency ωc ", " = 1 rad = ", " 1 Ω . ")
    assert not wikitext.is_title(" x ", " = = Sec = = ", " y ")


def test_load_wikitext_paths(data_root: Path) -> None:
    raw = data_root / "wikitext-103-raw" / "wiki.test.raw"
    raw.parent.mkdir()
    raw.write_bytes("\r\n".join(WIKI_LINES).encode() + b"\r\n")
    tok = data_root / "wikitext-2" / "wiki.valid.tokens"
    tok.parent.mkdir()
    tok.write_text(" \n = <unk> = \n \n a <unk> . \n \n")
    assert wikitext.load_wikitext("wikitext103", "test") == expected_articles()
    assert wikitext.load_wikitext("wikitext2", "valid") == [wikitext.Article("<unk>", "a <unk> .")]
    assert wikitext.count_articles(raw) == 2
    with pytest.raises(ValueError):
        wikitext.load_wikitext("wikitext3", "test")
    with pytest.raises(DataNotFoundError, match="fetch wikitext2"):
        wikitext.load_wikitext("wikitext2", "test")
