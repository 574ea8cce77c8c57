"""The dataset catalogue (prismlib.data.catalogue): every loader's dataset is in it, its
entries are consistent, the data README lists them, WikiText's sources are live hosts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prismlib.data import catalogue, newsgroups, pos, ptb, swda, wikitext
from prismlib.data.catalogue import Download, ParquetRows
from prismlib.data.datadir import DataNotFoundError


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
    assert set(loaders) == set(catalogue.DATASETS)
    for name, load in loaders.items():
        with pytest.raises(DataNotFoundError) as info:
            load()
        msg = str(info.value)
        assert f"python -m prismlib data fetch {name}`" in msg
        relpath = msg.split("'")[1]
        assert catalogue.dataset_of(relpath) is catalogue.DATASETS[name], relpath


def test_catalogue_is_consistent() -> None:
    assert set(catalogue.DATASETS) == {
        "ptb",
        "treebank_sample",
        "conll2000",
        "swda",
        "newsgroups",
        "wikitext103",
        "wikitext2",
    }
    relpaths = [f.relpath for d in catalogue.DATASETS.values() for f in d.files]
    assert len(relpaths) == len(set(relpaths))
    for ds in catalogue.DATASETS.values():
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
    for ds in catalogue.DATASETS.values():
        assert f"`{ds.name}`" in readme
        assert ds.licence in readme, ds.name
        for f in ds.files:
            assert f.relpath in readme, f.relpath
            for source in f.sources:
                url = source.url if isinstance(source, Download) else source.base
                assert url in readme, url


def test_wikitext_sources_are_live_hosts_with_checksums() -> None:
    for name in ("wikitext103", "wikitext2"):
        for f in catalogue.DATASETS[name].files:
            assert "metamind" not in " ".join(f.urls), f.relpath
            zipped, parquet = f.sources
            assert isinstance(zipped, Download) and isinstance(parquet, ParquetRows)
            assert zipped.url.startswith("https://wikitext.smerity.com/") and zipped.sha256
            assert zipped.member == f.relpath  # the zip keeps the canonical layout
            assert parquet.base.startswith("https://huggingface.co/datasets/Salesforce/wikitext/resolve/")
    train = catalogue.DATASETS["wikitext103"].files[2].sources[1]
    assert train.shards == (
        "wikitext-103-raw-v1/train-00000-of-00002.parquet",
        "wikitext-103-raw-v1/train-00001-of-00002.parquet",
    )
