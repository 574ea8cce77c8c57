"""The FLOP model of a profile: counts against the models themselves, every job counted."""

from __future__ import annotations

import pytest
import torch

from prismlib.lstm import RunSpec, all_specs, build_model
from prismlib.paths import project_root
from prismlib.prism import TRAINED
from prismlib.profiles import PROFILES
from prismlib.runs import costs


@pytest.mark.parametrize("encoder", ["bert-base-cased", "bert-base-cased-dryrun", "minilm"])
def test_bert_parameters_match_the_model(encoder):
    from transformers import BertConfig, BertForMaskedLM

    config = costs.encoder_config(encoder)
    with torch.device("meta"):
        model = BertForMaskedLM(BertConfig(**config))
    assert costs.bert_parameters(config)[0] == sum(p.numel() for p in model.parameters())


def test_section_4_is_costed_on_the_encoder_it_runs_on():
    from prismlib.pretrain import BertSize, new_bert, parameter_count

    cpu = costs.section4_config(PROFILES["cpu"])  # the BERT pretrained here, not MiniLM
    assert (cpu["num_hidden_layers"], cpu["hidden_size"]) == (4, 256) and costs.encoder_config("minilm")["hidden_size"] == 384
    assert costs.bert_parameters(cpu)[0] == parameter_count(new_bert(BertSize.parse("4x256"), seed=0))
    assert costs.section4_config(PROFILES["smoke"]) == costs.encoder_config("minilm")
    arms = [w for w in costs.works(PROFILES["cpu"]) if w.notebook == "03_prism_layer" and w.jobs]
    assert len(arms) == 1 and arms[0].memory == costs.bert_train_memory(cpu, 8, 512)


def test_bert_base_cased_is_the_published_size():
    total, _ = costs.bert_parameters(costs.encoder_config("bert-base-cased"))
    assert 108e6 < total < 109e6  # bert-base-cased with its MLM head: 108.3M


def test_lstm_flops_count_every_gate_weight():
    s = PROFILES["paper"].lstm
    model = build_model(RunSpec("baseline"), costs.PTB_VOCAB, s)
    weights = sum(p.numel() for name, p in model.rnns.named_parameters() if "weight" in name)
    assert costs.lstm_token_flops(s) == 2.0 * (weights + s.emb * costs.PTB_VOCAB)


@pytest.mark.parametrize("name", ["paper", "cpu", "dryrun"])
def test_works_cover_every_notebook_and_count_every_job(name):
    profile = PROFILES[name]
    work = costs.works(profile)
    notebooks = sorted(p.stem for p in (project_root() / "notebooks").glob("[0-9][0-9]_*.py"))
    assert sorted({w.notebook for w in work}) == notebooks  # every notebook, by its own name
    dyck = 2 * len(profile.iclr.dyck.seeds)  # notebook 10's Dyck-2 models: two kinds
    assert sum(w.jobs for w in work) == len(all_specs(profile)) + len(TRAINED) * len(profile.prism.seeds) + dyck
    trained = [s for w in work for s in w.specs]  # work B's models, each in the first notebook that reads it
    assert len(trained) == len(set(trained)) == len(all_specs(profile))
    assert all(w.flops >= 0 for w in work) and sum(w.flops for w in work) > 0


def test_paper_costs_more_than_cpu():
    paper, cpu = (costs.works(PROFILES[n]) for n in ("paper", "cpu"))
    assert sum(w.flops for w in paper) > 100 * sum(w.flops for w in cpu)
    assert max(w.memory for w in paper) > max(w.memory for w in cpu)


@pytest.mark.slow
def test_measure_times_each_kind_of_work_on_this_device():
    rates = costs.measure(PROFILES["dryrun"], device="cpu", steps=1)
    assert set(rates) == set(costs.ASSUMED_TFLOPS) and all(r > 0 for r in rates.values())


def test_each_probe_is_charged_its_own_epoch_cap():
    # issue 77: every probe was charged max_epochs, the MLM probe too (30 against mlm_epochs 3 on the paper profile)
    paper = PROFILES["paper"]
    Q = paper.probe
    assert Q.epochs_for("mlm") == Q.mlm_epochs != Q.max_epochs == Q.epochs_for("pos")
    for task in ("mlm", "pos"):
        size = Q.sizes[task]
        rows = costs._windows(paper, task, "train", size.train) * (size.positions if size.positions > 0 else costs.MASKED)
        expected = 6.0 * rows * 768 * costs.CLASSES[task] * Q.epochs_for(task)
        assert costs._probe_flops(paper, {task: size}, 768, 1, 1) == pytest.approx(expected)
