"""``python -m prismlib profile MODEL TEXT``: a table and a figure of every layer's energy per
band against white noise, from a local model folder; bad input is one line."""

from __future__ import annotations

import pandas as pd
import pytest

from prismlib.__main__ import main as cli
from prismlib.runs.spectrum import special_wrap, text_windows
from prismlib.spectral import white_noise_shares

TEXT = " ".join(f"The {w} sat on the mat and looked at the {v}." for w, v in zip(["cat", "dog", "bird"] * 40, ["sun", "moon", "sea"] * 40))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 2-layer BERT with random weights and MiniLM's tokenizer, saved as save_pretrained does."""
    from transformers import BertConfig, BertModel

    from prismlib.pretrain import pretraining_tokenizer

    folder = tmp_path_factory.mktemp("tiny") / "model"
    tok = pretraining_tokenizer()
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=64)  # fmt: skip
    BertModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder, tok


def test_windows_wrap_the_bert_special_tokens_and_never_exceed_the_window(tiny_model):
    _, tok = tiny_model
    assert special_wrap(tok) == ([tok.cls_token_id], [tok.sep_token_id])
    windows = text_windows(TEXT, tok, 40)
    assert all(len(w) <= 40 and w[0] == tok.cls_token_id and w[-1] == tok.sep_token_id for w in windows)
    inner, ids = [i for w in windows for i in w[1:-1]], tok(TEXT, add_special_tokens=False)["input_ids"]
    assert inner == ids[: len(inner)] and len(ids) - len(inner) < 5  # consecutive; only a last piece under 5 tokens left out
    with pytest.raises(ValueError, match="at least 5"):
        text_windows("a cat", tok, 40)
    with pytest.raises(ValueError, match="--window 4"):
        text_windows(TEXT, tok, 4)


def test_profile_writes_every_layers_shares_beside_white_noise_and_a_figure(tiny_model, tmp_path, capsys):
    folder, tok = tiny_model
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    out = tmp_path / "out"
    assert cli(["profile", str(folder), str(text), "--out", str(out), "--window", "48"]) == 0
    table = pd.read_csv(out / "band_energy.csv", index_col="layer")
    assert list(table.index) == ["0", "1", "2", "white noise"]
    assert table.sum(axis=1).to_numpy() == pytest.approx(1.0, abs=1e-3)
    lengths = [len(w) for w in text_windows(TEXT, tok, 48)]
    expected = white_noise_shares(lengths, center=True)
    assert table.loc["white noise"].to_numpy() == pytest.approx(expected.to_numpy(), abs=1e-4)
    assert (out / "band_energy.png").stat().st_size > 0 and (out / "band_energy.pdf").stat().st_size > 0
    assert "white noise" in capsys.readouterr().out


def test_a_folder_that_is_not_a_saved_model_and_a_missing_text_are_one_line(tiny_model, tmp_path, capsys):
    folder, _ = tiny_model
    text = tmp_path / "text.txt"
    text.write_text(TEXT)
    assert cli(["profile", str(tmp_path), str(text)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a saved Hugging Face model (no config.json)" in err
    assert cli(["profile", str(folder), str(tmp_path / "none.txt")]) == 1
    assert "no such text file" in capsys.readouterr().err
