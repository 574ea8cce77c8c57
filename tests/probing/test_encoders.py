"""Loading an encoder (prismlib.probing.encoders)."""

from __future__ import annotations


def test_loading_the_encoder_prints_no_weight_loading_bar(capfd):
    from prismlib.probing import load_encoder

    load_encoder("minilm", "cpu")
    out, err = capfd.readouterr()
    assert "Loading weights" not in out + err and "it/s]" not in err, err[-300:]


def test_the_masked_lm_premise_passes_for_bert_and_fails_for_minilm_with_the_reason_and_the_runs_numbers():
    from prismlib.probing import DRY_RUN_ENCODER, ENCODER_PRETRAINING, ENCODERS, MASKED_LM_PREMISE, masked_lm_premise

    assert set(ENCODER_PRETRAINING) == set(ENCODERS)  # every encoder of the registry states its pretraining
    bert = masked_lm_premise("bert-base-cased")
    assert bert.passed and bert.name == MASKED_LM_PREMISE == "the encoder was pretrained with masked LM (the paper's premise)"
    minilm = masked_lm_premise("minilm", "the ORIG masked-LM probe 12.8% vs the majority class 10.2%")
    assert not minilm.passed and minilm.name == MASKED_LM_PREMISE
    assert "contrastive sentence-similarity objective on its mean-pooled output" in minilm.detail
    assert "no masked-LM head" in minilm.detail
    assert minilm.detail.endswith("; measured: the ORIG masked-LM probe 12.8% vs the majority class 10.2%")
    assert "measured" not in masked_lm_premise("minilm").detail  # the numbers only where the caller passes them
    assert not masked_lm_premise(DRY_RUN_ENCODER).passed  # random weights: never trained
    unknown = masked_lm_premise("someone/else")
    assert not unknown.passed and "not in ENCODER_PRETRAINING" in unknown.detail  # an unstated premise is not shown
