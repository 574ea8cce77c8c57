"""Fetch and verify (prismlib.data.registry) with file:// URLs and tiny archives: one
download per archive, digests and structure checks, mirrors tried in order, parquet rows,
SHA256SUMS, and check-urls against a fake server; last, verify on the real data directory
(marked ``data``: ``real_data.reads_real_data``) and one flipped byte in a copy of it.

Some tests end with the exit status of ``python -m prismlib data`` on the same state
(:mod:`prismlib.runs.data`); the command line's own tests are ``tests/runs/test_data.py``.
"""

from __future__ import annotations

import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from data_fixtures import WIKI_TEXT, fake_server, hf_rows, passes, sha, use_catalogue, write_tar, write_zip
from real_data import REAL_DIR, need, reads_real_data

from prismlib.__main__ import USAGE
from prismlib.data import catalogue, download, registry, swda, wikitext
from prismlib.data.catalogue import DataFile, Dataset, Download, ParquetRows
from prismlib.data.datadir import ChecksumError, DownloadError
from prismlib.runs.data import main
from prismlib.runs.data import main as data_main

PTB_TRAIN = b" the cat sat \n the dog <unk> \n"
PTB_TEST = b" a cat \n"


@pytest.fixture
def ptb_archive(tmp_path: Path) -> Path:
    return write_tar(
        tmp_path / "remote" / "simple-examples.tgz",
        {
            "./simple-examples/data/ptb.train.txt": PTB_TRAIN,
            "./simple-examples/data/ptb.test.txt": PTB_TEST,
        },
    )


def tiny_ptb(archive: Path, test_sha: str | None = None) -> Dataset:
    url = archive.as_uri()
    return Dataset(
        "ptb",
        "tiny",
        "test licence",
        (
            DataFile(
                "ptb/ptb.train.txt",
                (Download(url, "./simple-examples/data/ptb.train.txt"),),
                sha(PTB_TRAIN),
            ),
            DataFile(
                "ptb/ptb.test.txt",
                (Download(url, "simple-examples/data/ptb.test.txt"),),
                test_sha or sha(PTB_TEST),
            ),
        ),
    )


def test_fetch_downloads_once_extracts_and_skips_quietly(
    data_root: Path, ptb_archive: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    use_catalogue(monkeypatch, tiny_ptb(ptb_archive))
    calls: list[str] = []
    real_download = registry.download
    monkeypatch.setattr(
        registry,
        "download",
        lambda url, d, **kw: calls.append(url) or real_download(url, d, **kw),
    )
    assert registry.fetch(["ptb"]) == registry.Fetched(datasets=1, valid=0, written=2, left_out=0)
    assert calls == [ptb_archive.as_uri()]  # one download for both members
    assert (data_root / "ptb" / "ptb.train.txt").read_bytes() == PTB_TRAIN
    assert (data_root / "ptb" / "ptb.test.txt").read_bytes() == PTB_TEST
    assert (data_root / "_downloads" / "simple-examples.tgz").is_file()
    assert not list(data_root.rglob("*.part"))
    out = capsys.readouterr().out.splitlines()  # what was written now is news: under the dataset's name
    assert out[0] == "ptb: tiny" and [ln.split(":")[0] for ln in out[1:]] == ["  ptb/ptb.train.txt", "  ptb/ptb.test.txt"], out
    assert registry.fetch(["ptb"]) == registry.Fetched(datasets=1, valid=2, written=0, left_out=0)
    assert calls == [ptb_archive.as_uri()]
    assert capsys.readouterr().out == ""  # files already valid: nothing printed by default
    registry.fetch(["ptb"], verbose=True)
    assert capsys.readouterr().out.splitlines()[1:] == [
        f"  ptb/ptb.train.txt: present and valid, skipped (sha256 ok ({sha(PTB_TRAIN)[:12]}...))",
        f"  ptb/ptb.test.txt: present and valid, skipped (sha256 ok ({sha(PTB_TEST)[:12]}...))",
    ]
    assert all(s.ok for s in registry.verify(["ptb"])["ptb"])


def test_fetch_mismatch_raises_and_keeps_good_file(data_root: Path, ptb_archive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = "0" * 64
    use_catalogue(monkeypatch, tiny_ptb(ptb_archive, test_sha=bad))
    with pytest.raises(ChecksumError) as info:
        registry.fetch(["ptb"])
    msg = str(info.value)
    assert "ptb/ptb.test.txt" in msg and bad in msg and sha(PTB_TEST) in msg
    assert not (data_root / "ptb" / "ptb.test.txt").exists()

    # an existing good file is never replaced by a download that fails its checksum
    good = b"good content\n"
    (data_root / "ptb" / "ptb.test.txt").write_bytes(good)
    use_catalogue(monkeypatch, tiny_ptb(ptb_archive, test_sha=sha(good)))
    with pytest.raises(ChecksumError):
        registry.fetch(["ptb"], force=True)
    assert (data_root / "ptb" / "ptb.test.txt").read_bytes() == good


def test_fetch_zip_members_and_missing_member(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    valid, test = b" \n = A = \n \n a . \n", b" \n = B = \n \n b . \n"
    archive = write_zip(
        tmp_path / "remote" / "wikitext-2-v1.zip",
        {"wikitext-2/wiki.valid.tokens": valid, "wikitext-2/wiki.test.tokens": test},
    )
    url = archive.as_uri()
    contents = {"wikitext-2/wiki.valid.tokens": valid, "wikitext-2/wiki.test.tokens": test}
    files = tuple(DataFile(rel, (Download(url, rel),), sha(b)) for rel, b in contents.items())
    use_catalogue(monkeypatch, Dataset("wikitext2", "x", "x", files))
    registry.fetch(["wikitext2"])
    assert [a.title for a in wikitext.load_wikitext("wikitext2", "test")] == ["B"]
    missing = DataFile(
        "wikitext-2/wiki.train.tokens",
        (Download(url, "wikitext-2/wiki.train.tokens"),),
        check=wikitext.check_file,
    )
    use_catalogue(monkeypatch, Dataset("wikitext2", "x", "x", (missing,)))
    with pytest.raises(ChecksumError, match="no member"):
        registry.fetch(["wikitext2"])
    assert not (data_root / "wikitext-2" / "wiki.train.tokens").exists()


def test_fetch_offline_names_url(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    url = (tmp_path / "nowhere" / "corpus.zip").as_uri()
    files = (DataFile("x.txt", (Download(url),), "0" * 64),)
    use_catalogue(monkeypatch, Dataset("x", "x", "x", files))
    with pytest.raises(DownloadError, match=re.escape(url)):
        registry.fetch(["x"])
    assert main(["data", "fetch", "x"]) == 1


def test_fetch_plain_file_and_structure_check(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "remote" / "ids.list"
    src.parent.mkdir()
    src.write_text("sw2005\nsw2006\n")
    f = DataFile("lists/ids.list", (Download(src.as_uri()),), check=swda.check_id_list(2))
    use_catalogue(monkeypatch, Dataset("lists", "x", "x", (f,)))
    registry.fetch()
    assert (data_root / "lists" / "ids.list").read_text() == "sw2005\nsw2006\n"
    assert registry.verify()["lists"][0].ok
    # fetch records what it wrote in SHA256SUMS: another well-formed id is caught by its digest
    assert registry.listed_digests(data_root) == {"lists/ids.list": sha(b"sw2005\nsw2006\n")}
    (data_root / "lists" / "ids.list").write_text("sw2005\nsw2007\n")
    status = registry.verify()["lists"][0]
    assert status.state == "bad" and "SHA256SUMS lists" in status.detail
    (data_root / registry.DIGESTS).unlink()
    assert registry.verify()["lists"][0].ok  # no digest known: the structure check alone
    (data_root / "lists" / "ids.list").write_text("sw2005\n")
    status = registry.verify()["lists"][0]
    assert status.state == "bad" and "expected 2" in status.detail


def test_fetch_skips_paper_only_files_unless_asked(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "big.txt"
    src.write_bytes(b"big\n")
    f = DataFile("big.txt", (Download(src.as_uri()),), sha(b"big\n"), paper_only=True)
    use_catalogue(monkeypatch, Dataset("d", "x", "x", (f,)))
    assert registry.fetch() == registry.Fetched(datasets=1, valid=0, written=0, left_out=1)
    assert not (data_root / "big.txt").exists()
    assert main(["fetch", "--paper"]) == 0
    assert (data_root / "big.txt").read_bytes() == b"big\n"


def test_verify_reports_missing_bad_ok(data_root: Path, monkeypatch) -> None:
    content = b"hello\n"
    files = (
        DataFile("a.txt", (Download("https://example.invalid/a.txt"),), sha(content)),
        DataFile("b.txt", (Download("https://example.invalid/b.txt"),), sha(b"other")),
        DataFile("c.txt", (Download("https://example.invalid/c.txt"),), sha(b"c"), paper_only=True),
    )
    use_catalogue(monkeypatch, Dataset("d", "x", "x", files))
    (data_root / "a.txt").write_bytes(content)
    (data_root / "b.txt").write_bytes(content)
    states = [(s.state, s.required) for s in registry.verify()["d"]]
    assert states == [("ok", True), ("bad", True), ("missing", False)]
    assert main(["verify"]) == 1
    (data_root / "b.txt").write_bytes(b"other")
    assert main(["verify", "d"]) == 0  # paper-only files may be missing


def test_fetch_falls_back_to_the_next_source(data_root: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    content = b" \n = A = \n \n a . \n"
    good = write_zip(tmp_path / "mirror2" / "w.zip", {"w/wiki.test.tokens": content})
    dead = (tmp_path / "mirror1" / "w.zip").as_uri()
    sources = (
        Download(dead, "w/wiki.test.tokens"),
        Download(good.as_uri(), "w/wiki.test.tokens", sha(good.read_bytes())),
    )
    files = (DataFile("w/wiki.test.tokens", sources, sha(content)),)
    use_catalogue(monkeypatch, Dataset("w", "x", "x", files))
    registry.fetch(["w"])
    assert (data_root / "w" / "wiki.test.tokens").read_bytes() == content
    out = capsys.readouterr().out
    assert f"{dead} failed; trying the next source" in out
    assert f"fetched from {good.as_uri()}" in out


def test_fetch_checks_the_archive_digest_before_extracting(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    archive = write_zip(tmp_path / "remote" / "w.zip", {"w/a.txt": b"a\n"})
    f = DataFile("w/a.txt", (Download(archive.as_uri(), "w/a.txt", "0" * 64),), check=passes)
    use_catalogue(monkeypatch, Dataset("w", "x", "x", (f,)))
    with pytest.raises(ChecksumError) as info:
        registry.fetch(["w"])
    msg = str(info.value)
    assert archive.as_uri() in msg and "0" * 64 in msg and sha(archive.read_bytes()) in msg
    assert not (data_root / "_downloads" / "w.zip").exists()  # a bad download is not reused
    assert not (data_root / "w" / "a.txt").exists()


def test_fetch_every_source_failing_lists_each(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    dead1, dead2 = ((tmp_path / d / "x.txt").as_uri() for d in ("m1", "m2"))
    files = (DataFile("x.txt", (Download(dead1), Download(dead2)), "0" * 64),)
    use_catalogue(monkeypatch, Dataset("x", "x", "x", files))
    with pytest.raises(DownloadError, match="no source gave a valid x.txt") as info:
        registry.fetch(["x"])
    assert dead1 in str(info.value) and dead2 in str(info.value)
    # a mirror that delivers a wrong file makes it a checksum error
    wrong = tmp_path / "m3" / "x.txt"
    wrong.parent.mkdir()
    wrong.write_bytes(b"wrong\n")
    files = (DataFile("x.txt", (Download(dead1), Download(wrong.as_uri())), sha(b"right\n")),)
    use_catalogue(monkeypatch, Dataset("x", "x", "x", files))
    with pytest.raises(ChecksumError, match=f"expected sha256 {sha(b'right' + bytes([10]))}"):
        registry.fetch(["x"])
    assert not (data_root / "x.txt").exists()
    assert main(["fetch", "x"]) == 1


def test_fetch_rebuilds_the_canonical_file_from_parquet_shards(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = hf_rows(WIKI_TEXT)
    hub = tmp_path / "hub"
    (hub / "cfg").mkdir(parents=True)
    shards = ("cfg/test-00000-of-00002.parquet", "cfg/test-00001-of-00002.parquet")
    pq.write_table(pa.table({"text": rows[:5]}), hub / shards[0], row_group_size=2)
    pq.write_table(pa.table({"text": rows[5:]}), hub / shards[1])
    relpath = "wikitext-2/wiki.test.tokens"
    dead = Download((tmp_path / "gone" / "w.zip").as_uri(), relpath)
    f = DataFile(relpath, (dead, ParquetRows(hub.as_uri(), shards)), sha(WIKI_TEXT.encode()))
    use_catalogue(monkeypatch, Dataset("wikitext2", "x", "x", (f,)))
    registry.fetch(["wikitext2"])
    assert (data_root / relpath).read_bytes() == WIKI_TEXT.encode()
    assert [a.title for a in wikitext.load_wikitext("wikitext2", "test")] == ["A", "B"]
    # shards of different configurations share names: the download keeps the folder
    assert (data_root / "_downloads" / "cfg-test-00000-of-00002.parquet").is_file()
    # a shard that is not parquet, or lacks the column, is a checksum error
    (hub / "cfg" / "bad.parquet").write_bytes(b"not parquet")
    pq.write_table(pa.table({"other": ["x\n"]}), hub / "cfg" / "other.parquet")
    for shard, problem in (("bad.parquet", "not a readable"), ("other.parquet", "no column")):
        f = DataFile("w.txt", (ParquetRows(hub.as_uri(), (f"cfg/{shard}",)),), check=passes)
        use_catalogue(monkeypatch, Dataset("w", "x", "x", (f,)))
        with pytest.raises(ChecksumError, match=problem):
            registry.fetch(["w"])
        assert not (data_root / "w.txt").exists()


def test_parquet_source_without_pyarrow_says_how_to_install(data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow fails
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    calls: list[str] = []
    monkeypatch.setattr(registry, "download", lambda url, *a, **kw: calls.append(url))
    source = ParquetRows("https://example.invalid/hub", ("cfg/test-00000-of-00001.parquet",))
    use_catalogue(monkeypatch, Dataset("w", "x", "x", (DataFile("w.txt", (source,), check=passes),)))
    with pytest.raises(ImportError, match="w.txt comes from parquet files.*pip install pyarrow"):
        registry.fetch(["w"])
    assert calls == []  # nothing downloaded first
    assert main(["fetch", "w"]) == 1


def test_check_urls_head_then_ranged_get(data_root: Path, monkeypatch, capsys) -> None:
    a, b = "https://a.example/a.zip", "https://b.example/b.zip"
    hub = ParquetRows("https://hub.example/rev", ("cfg/t.parquet",))
    files = (
        DataFile("a1", (Download(a, "m1"),), check=passes),
        DataFile("a2", (Download(a, "m2"), Download(b), hub), check=passes),
        DataFile("d", (), check=passes, derive=lambda root: b""),
    )
    use_catalogue(monkeypatch, Dataset("d", "x", "x", files))
    parquet = hub.urls[0]
    urlopen, calls = fake_server({("HEAD", a): 200, ("HEAD", b): 405, ("GET", b): 206} | {("HEAD", parquet): 403, ("GET", parquet): 403})
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    statuses = registry.check_urls(timeout=3)
    assert [(s.url, s.ok, s.status) for s in statuses] == [(a, True, 200), (b, True, 206), (parquet, False, 403)]
    assert "99 bytes" in statuses[0].detail and "1,234 bytes" in statuses[1].detail
    assert ("GET", b, "bytes=0-0", 3) in calls and all(c[3] == 3 for c in calls)
    assert len([c for c in calls if c[1] == a]) == 1  # each URL once
    assert main(["check-urls", "d"]) == 1
    out = capsys.readouterr().out
    assert "FAILED HEAD 403, ranged GET HTTP 403 Forbidden" in out and parquet in out

    urlopen, _ = fake_server({("HEAD", a): urllib.error.URLError("Name or service not known")})
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    [status] = [download.probe(a)]
    assert not status.ok and status.status is None and "Name or service not known" in status.detail

    urlopen, _ = fake_server({("HEAD", u): 200 for u in (a, b, parquet)})
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    assert main(["data", "check-urls"]) == 0
    assert "data check-urls" in USAGE


@reads_real_data
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


# one file of each kind: plain text with a published digest, zip, tar.gz, raw text and a
# conversation-id list checked by structure, whose digests only SHA256SUMS knows
CORRUPTED = (
    "ptb/ptb.test.txt",
    "nltk_data/corpora/treebank.zip",
    "swb1_dialogact_annot.tar.gz",
    "wikitext-103-raw/wiki.test.raw",
    "swda_splits/ws97-test-convs.list",
)


@reads_real_data
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
