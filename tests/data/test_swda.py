"""The Switchboard dialog acts (prismlib.data.swda): DAMSL tags, .utt files, the splits and the
derived validation list; their known counts.

Every fixture is written into ``tmp_path`` in the format of the real distribution;
``PRISMLIB_DATA`` and the repository root are pointed into ``tmp_path`` (the ``data_root``
fixture of ``tests/conftest.py``) so that a real ``<repo>/data`` never leaks into a test.
The tests marked ``data`` (``real_data.reads_real_data``, last in the file) read the real
dataset through ``PRISMLIB_DATA`` (else ``<repo>/../shared/data``) and skip, naming the missing
file, when it is absent (``python -m prismlib data fetch NAME``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from data_fixtures import passes, use_catalogue, write_tar
from real_data import REAL_DIR, need, reads_real_data

from prismlib.data import catalogue, registry, swda
from prismlib.data.catalogue import DataFile, Dataset, Download


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


@reads_real_data
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
