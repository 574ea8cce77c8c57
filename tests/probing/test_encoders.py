"""Loading an encoder (prismlib.probing.encoders)."""

from __future__ import annotations


def test_loading_the_encoder_prints_no_weight_loading_bar(capfd):
    from prismlib.probing import load_encoder

    load_encoder("minilm", "cpu")
    out, err = capfd.readouterr()
    assert "Loading weights" not in out + err and "it/s]" not in err, err[-300:]
