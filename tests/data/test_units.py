"""Unit tests of prismlib.data on tiny files the tests write themselves (no real data).

Every fixture is written into ``tmp_path`` in the format of the real distribution;
``PRISMLIB_DATA`` and the repository root are pointed into ``tmp_path`` so that a
real ``<repo>/data`` never leaks into a test.
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
import tarfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prismlib.__main__ import USAGE
from prismlib.data import datadir, download, newsgroups, pos, ptb, registry, swda, unpack, wikitext
from prismlib.data.datadir import ChecksumError, DataNotFoundError, DownloadError
from prismlib.data.registry import DataFile, Dataset, Download, ParquetRows

# ---------------------------------------------------------------------------
# helpers


@pytest.fixture
def data_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data directory set as PRISMLIB_DATA; the repo root moved into tmp."""
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv(datadir.ENV_VAR, str(root))
    monkeypatch.setattr(datadir, "REPO_ROOT", tmp_path / "repo")
    return root


def write_tar(path: Path, files: dict[str, bytes]) -> Path:
    """A .tar.gz with the given members (parents created implicitly)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def write_zip(path: Path, files: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def passes(path: Path) -> str:
    """A structural check that accepts any file."""
    return "ok"


def use_registry(monkeypatch: pytest.MonkeyPatch, *datasets: Dataset) -> None:
    monkeypatch.setattr(registry, "DATASETS", {d.name: d for d in datasets})


# ---------------------------------------------------------------------------
# registry: data dir, locate, registry contents


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


def test_every_loader_names_its_registered_dataset(data_root: Path) -> None:
    # each loader's missing-file error names the dataset that `fetch` knows
    loaders = {
        "ptb": lambda: ptb.load_ptb("test"),
        "treebank_sample": pos.load_treebank_sample,
        "conll2000": lambda: pos.load_conll2000("test"),
        "swda": lambda: swda.load_swda("test"),
        "newsgroups": lambda: newsgroups.load_newsgroups("test"),
        "wikitext103": lambda: wikitext.load_wikitext("wikitext103", "test"),
        "wikitext2": lambda: wikitext.load_wikitext("wikitext2", "test"),
    }
    assert set(loaders) == set(registry.DATASETS)
    for name, load in loaders.items():
        with pytest.raises(DataNotFoundError) as info:
            load()
        msg = str(info.value)
        assert f"python -m prismlib data fetch {name}`" in msg
        relpath = msg.split("'")[1]
        assert registry.dataset_of(relpath) is registry.DATASETS[name], relpath


def test_registry_is_consistent() -> None:
    assert set(registry.DATASETS) == {
        "ptb", "treebank_sample", "conll2000", "swda", "newsgroups", "wikitext103", "wikitext2",
    }  # fmt: skip
    relpaths = [f.relpath for d in registry.DATASETS.values() for f in d.files]
    assert len(relpaths) == len(set(relpaths))
    for ds in registry.DATASETS.values():
        assert ds.licence and ds.description and ds.files
        for f in ds.files:
            assert f.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", f.sha256)
            assert f.sha256 is not None or f.check is not None, f.relpath
            assert (not f.sources) == (f.derive is not None), f.relpath
            assert all(url.startswith(("http://", "https://")) for url in f.urls)
            for source in f.sources:
                if isinstance(source, Download):
                    assert source.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", source.sha256)
                else:
                    assert source.shards and all(s.endswith(".parquet") for s in source.shards)


def test_data_readme_lists_every_dataset() -> None:
    readme = (Path(__file__).resolve().parents[2] / "data" / "README.md").read_text()
    for ds in registry.DATASETS.values():
        assert f"`{ds.name}`" in readme
        assert ds.licence in readme, ds.name
        for f in ds.files:
            assert f.relpath in readme, f.relpath
            for source in f.sources:
                url = source.url if isinstance(source, Download) else source.base
                assert url in readme, url


# ---------------------------------------------------------------------------
# registry: fetch / verify with file:// URLs


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


def test_fetch_downloads_once_extracts_and_skips(data_root: Path, ptb_archive: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_registry(monkeypatch, tiny_ptb(ptb_archive))
    calls: list[str] = []
    real_download = registry.download
    monkeypatch.setattr(
        registry,
        "download",
        lambda url, d, **kw: calls.append(url) or real_download(url, d, **kw),
    )
    registry.fetch(["ptb"])
    assert calls == [ptb_archive.as_uri()]  # one download for both members
    assert (data_root / "ptb" / "ptb.train.txt").read_bytes() == PTB_TRAIN
    assert (data_root / "ptb" / "ptb.test.txt").read_bytes() == PTB_TEST
    assert (data_root / "_downloads" / "simple-examples.tgz").is_file()
    assert not list(data_root.rglob("*.part"))
    capsys.readouterr()
    registry.fetch(["ptb"])
    assert calls == [ptb_archive.as_uri()]
    assert "present and valid, skipped" in capsys.readouterr().out
    assert all(s.ok for s in registry.verify(["ptb"])["ptb"])


def test_fetch_mismatch_raises_and_keeps_good_file(data_root: Path, ptb_archive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = "0" * 64
    use_registry(monkeypatch, tiny_ptb(ptb_archive, test_sha=bad))
    with pytest.raises(ChecksumError) as info:
        registry.fetch(["ptb"])
    msg = str(info.value)
    assert "ptb/ptb.test.txt" in msg and bad in msg and sha(PTB_TEST) in msg
    assert not (data_root / "ptb" / "ptb.test.txt").exists()

    # an existing good file is never replaced by a download that fails its checksum
    good = b"good content\n"
    (data_root / "ptb" / "ptb.test.txt").write_bytes(good)
    use_registry(monkeypatch, tiny_ptb(ptb_archive, test_sha=sha(good)))
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
    use_registry(monkeypatch, Dataset("wikitext2", "x", "x", files))
    registry.fetch(["wikitext2"])
    assert [a.title for a in wikitext.load_wikitext("wikitext2", "test")] == ["B"]
    missing = DataFile(
        "wikitext-2/wiki.train.tokens",
        (Download(url, "wikitext-2/wiki.train.tokens"),),
        check=wikitext.check_file,
    )
    use_registry(monkeypatch, Dataset("wikitext2", "x", "x", (missing,)))
    with pytest.raises(ChecksumError, match="no member"):
        registry.fetch(["wikitext2"])
    assert not (data_root / "wikitext-2" / "wiki.train.tokens").exists()


def test_fetch_offline_names_url(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    url = (tmp_path / "nowhere" / "corpus.zip").as_uri()
    files = (DataFile("x.txt", (Download(url),), "0" * 64),)
    use_registry(monkeypatch, Dataset("x", "x", "x", files))
    with pytest.raises(DownloadError, match=re.escape(url)):
        registry.fetch(["x"])
    assert registry.main(["data", "fetch", "x"]) == 1


def test_fetch_plain_file_and_structure_check(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "remote" / "ids.list"
    src.parent.mkdir()
    src.write_text("sw2005\nsw2006\n")
    f = DataFile("lists/ids.list", (Download(src.as_uri()),), check=swda.check_id_list(2))
    use_registry(monkeypatch, Dataset("lists", "x", "x", (f,)))
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
    use_registry(monkeypatch, Dataset("d", "x", "x", (f,)))
    registry.fetch()
    assert not (data_root / "big.txt").exists()
    assert registry.main(["fetch", "--paper"]) == 0
    assert (data_root / "big.txt").read_bytes() == b"big\n"


def test_verify_reports_missing_bad_ok(data_root: Path, monkeypatch) -> None:
    content = b"hello\n"
    files = (
        DataFile("a.txt", (Download("https://example.invalid/a.txt"),), sha(content)),
        DataFile("b.txt", (Download("https://example.invalid/b.txt"),), sha(b"other")),
        DataFile("c.txt", (Download("https://example.invalid/c.txt"),), sha(b"c"), paper_only=True),
    )
    use_registry(monkeypatch, Dataset("d", "x", "x", files))
    (data_root / "a.txt").write_bytes(content)
    (data_root / "b.txt").write_bytes(content)
    states = [(s.state, s.required) for s in registry.verify()["d"]]
    assert states == [("ok", True), ("bad", True), ("missing", False)]
    assert registry.main(["verify"]) == 1
    (data_root / "b.txt").write_bytes(b"other")
    assert registry.main(["verify", "d"]) == 0  # paper-only files may be missing


def test_verify_of_a_directory_without_any_dataset_is_one_line(data_root: Path, monkeypatch, capsys) -> None:
    files = tuple(DataFile(f"{n}.txt", (Download(f"https://example.invalid/{n}.txt"),), sha(b"x")) for n in "abc")
    use_registry(monkeypatch, Dataset("d", "x", "x", files))
    assert registry.main(["verify"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.strip().splitlines() == [err.strip()]
    assert "holds none of the datasets" in err and "python -m prismlib data fetch" in err
    (data_root / "a.txt").write_bytes(b"x")  # one file present: the per-file listing again
    assert registry.main(["verify"]) == 1
    assert "a.txt" in capsys.readouterr().out


def test_main_list_and_unknown_name(data_root: Path, capsys) -> None:
    assert registry.main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "swda" in out and "CC BY-NC-SA" in out
    with pytest.raises(SystemExit):
        registry.main(["fetch", "no_such_dataset"])


# ---------------------------------------------------------------------------
# registry: several sources per file, archive digests, parquet rows


def test_wikitext_sources_are_live_hosts_with_checksums() -> None:
    for name in ("wikitext103", "wikitext2"):
        for f in registry.DATASETS[name].files:
            assert "metamind" not in " ".join(f.urls), f.relpath
            zipped, parquet = f.sources
            assert isinstance(zipped, Download) and isinstance(parquet, ParquetRows)
            assert zipped.url.startswith("https://wikitext.smerity.com/") and zipped.sha256
            assert zipped.member == f.relpath  # the zip keeps the canonical layout
            assert parquet.base.startswith("https://huggingface.co/datasets/Salesforce/wikitext/resolve/")
    train = registry.DATASETS["wikitext103"].files[2].sources[1]
    assert train.shards == (
        "wikitext-103-raw-v1/train-00000-of-00002.parquet",
        "wikitext-103-raw-v1/train-00001-of-00002.parquet",
    )


def test_fetch_falls_back_to_the_next_source(data_root: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    content = b" \n = A = \n \n a . \n"
    good = write_zip(tmp_path / "mirror2" / "w.zip", {"w/wiki.test.tokens": content})
    dead = (tmp_path / "mirror1" / "w.zip").as_uri()
    sources = (
        Download(dead, "w/wiki.test.tokens"),
        Download(good.as_uri(), "w/wiki.test.tokens", sha(good.read_bytes())),
    )
    files = (DataFile("w/wiki.test.tokens", sources, sha(content)),)
    use_registry(monkeypatch, Dataset("w", "x", "x", files))
    registry.fetch(["w"])
    assert (data_root / "w" / "wiki.test.tokens").read_bytes() == content
    out = capsys.readouterr().out
    assert f"{dead} failed; trying the next source" in out
    assert f"fetched from {good.as_uri()}" in out


def test_fetch_checks_the_archive_digest_before_extracting(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    archive = write_zip(tmp_path / "remote" / "w.zip", {"w/a.txt": b"a\n"})
    f = DataFile("w/a.txt", (Download(archive.as_uri(), "w/a.txt", "0" * 64),), check=passes)
    use_registry(monkeypatch, Dataset("w", "x", "x", (f,)))
    with pytest.raises(ChecksumError) as info:
        registry.fetch(["w"])
    msg = str(info.value)
    assert archive.as_uri() in msg and "0" * 64 in msg and sha(archive.read_bytes()) in msg
    assert not (data_root / "_downloads" / "w.zip").exists()  # a bad download is not reused
    assert not (data_root / "w" / "a.txt").exists()


def test_fetch_every_source_failing_lists_each(data_root: Path, tmp_path: Path, monkeypatch) -> None:
    dead1, dead2 = ((tmp_path / d / "x.txt").as_uri() for d in ("m1", "m2"))
    files = (DataFile("x.txt", (Download(dead1), Download(dead2)), "0" * 64),)
    use_registry(monkeypatch, Dataset("x", "x", "x", files))
    with pytest.raises(DownloadError, match="no source gave a valid x.txt") as info:
        registry.fetch(["x"])
    assert dead1 in str(info.value) and dead2 in str(info.value)
    # a mirror that delivers a wrong file makes it a checksum error
    wrong = tmp_path / "m3" / "x.txt"
    wrong.parent.mkdir()
    wrong.write_bytes(b"wrong\n")
    files = (DataFile("x.txt", (Download(dead1), Download(wrong.as_uri())), sha(b"right\n")),)
    use_registry(monkeypatch, Dataset("x", "x", "x", files))
    with pytest.raises(ChecksumError, match=f"expected sha256 {sha(b'right' + bytes([10]))}"):
        registry.fetch(["x"])
    assert not (data_root / "x.txt").exists()
    assert registry.main(["fetch", "x"]) == 1


WIKI_TEXT = " \n = A = \n \n a . \n \n = B = \n \n b . \n \n"


def hf_rows(text: str) -> list[str]:
    """Rows as the Hugging Face loading script made them: a line with its end, and a
    line of only whitespace as an empty string."""
    return [line if line.strip() else "" for line in io.StringIO(text)]


def test_lines_from_rows_restores_the_blank_lines() -> None:
    assert "".join(unpack.lines_from_rows(hf_rows(WIKI_TEXT), " \n")) == WIKI_TEXT
    assert list(unpack.lines_from_rows([None, "", "x\n"], " \n")) == [" \n", " \n", "x\n"]


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
    use_registry(monkeypatch, Dataset("wikitext2", "x", "x", (f,)))
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
        use_registry(monkeypatch, Dataset("w", "x", "x", (f,)))
        with pytest.raises(ChecksumError, match=problem):
            registry.fetch(["w"])
        assert not (data_root / "w.txt").exists()


def test_parquet_source_without_pyarrow_says_how_to_install(data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow fails
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    calls: list[str] = []
    monkeypatch.setattr(registry, "download", lambda url, *a, **kw: calls.append(url))
    source = ParquetRows("https://example.invalid/hub", ("cfg/test-00000-of-00001.parquet",))
    use_registry(monkeypatch, Dataset("w", "x", "x", (DataFile("w.txt", (source,), check=passes),)))
    with pytest.raises(ImportError, match="w.txt comes from parquet files.*pip install pyarrow"):
        registry.fetch(["w"])
    assert calls == []  # nothing downloaded first
    assert registry.main(["fetch", "w"]) == 1


# ---------------------------------------------------------------------------
# download and check-urls, with urllib mocked (no network in tests)


class FakeResponse(io.BytesIO):
    def __init__(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        super().__init__(body)
        self.status = status
        self.headers = headers or {}


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


def fake_server(answers: dict[tuple[str, str], int | Exception]):
    """urlopen answering (method, url) with a status (>= 400 raises HTTPError) or an
    exception; records (method, url, Range header, timeout)."""
    calls: list[tuple] = []

    def urlopen(req, timeout):
        calls.append((req.get_method(), req.full_url, req.get_header("Range"), timeout))
        answer = answers[(req.get_method(), req.full_url)]
        if isinstance(answer, Exception):
            raise answer
        if answer >= 400:
            raise urllib.error.HTTPError(req.full_url, answer, "Forbidden", {}, None)
        headers = {"Content-Range": "bytes 0-0/1234"} if answer == 206 else {"Content-Length": "99"}
        return FakeResponse(answer, b"", headers)

    return urlopen, calls


def test_check_urls_head_then_ranged_get(data_root: Path, monkeypatch, capsys) -> None:
    a, b = "https://a.example/a.zip", "https://b.example/b.zip"
    hub = ParquetRows("https://hub.example/rev", ("cfg/t.parquet",))
    files = (
        DataFile("a1", (Download(a, "m1"),), check=passes),
        DataFile("a2", (Download(a, "m2"), Download(b), hub), check=passes),
        DataFile("d", (), check=passes, derive=lambda root: b""),
    )
    use_registry(monkeypatch, Dataset("d", "x", "x", files))
    parquet = hub.urls[0]
    urlopen, calls = fake_server({("HEAD", a): 200, ("HEAD", b): 405, ("GET", b): 206} | {("HEAD", parquet): 403, ("GET", parquet): 403})
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    statuses = registry.check_urls(timeout=3)
    assert [(s.url, s.ok, s.status) for s in statuses] == [
        (a, True, 200), (b, True, 206), (parquet, False, 403)
    ]  # fmt: skip
    assert "99 bytes" in statuses[0].detail and "1,234 bytes" in statuses[1].detail
    assert ("GET", b, "bytes=0-0", 3) in calls and all(c[3] == 3 for c in calls)
    assert len([c for c in calls if c[1] == a]) == 1  # each URL once
    assert registry.main(["check-urls", "d"]) == 1
    out = capsys.readouterr().out
    assert "FAILED HEAD 403, ranged GET HTTP 403 Forbidden" in out and parquet in out

    urlopen, _ = fake_server({("HEAD", a): urllib.error.URLError("Name or service not known")})
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    [status] = [download.probe(a)]
    assert not status.ok and status.status is None and "Name or service not known" in status.detail

    urlopen, _ = fake_server({("HEAD", u): 200 for u in (a, b, parquet)})
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    assert registry.main(["data", "check-urls"]) == 0
    assert "data check-urls" in USAGE


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
    real = registry.DATASETS["swda"]
    files = tuple(f if not f.sources else DataFile(f.relpath, (Download((remote / f.relpath).as_uri()),), check=passes) for f in real.files)
    val = files[-1]
    files = files[:-1] + (DataFile(val.relpath, (), check=swda.check_id_list(1), derive=val.derive),)
    use_registry(monkeypatch, Dataset("swda", "x", "x", files))
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
