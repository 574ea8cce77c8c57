"""The cost plan of a profile: counts against the models themselves, the table's shape."""

from __future__ import annotations

import pytest
import torch

from prismlib.lstm import RunSpec, all_specs, build_model
from prismlib.prism import TRAINED
from prismlib.profiles import PROFILES
from prismlib.runs import costs as plan


@pytest.mark.parametrize("encoder", ["bert-base-cased", "bert-base-cased-dryrun", "minilm"])
def test_bert_parameters_match_the_model(encoder):
    from transformers import BertConfig, BertForMaskedLM

    config = plan.encoder_config(encoder)
    with torch.device("meta"):
        model = BertForMaskedLM(BertConfig(**config))
    assert plan.bert_parameters(config)[0] == sum(p.numel() for p in model.parameters())


def test_bert_base_cased_is_the_published_size():
    total, _ = plan.bert_parameters(plan.encoder_config("bert-base-cased"))
    assert 108e6 < total < 109e6  # bert-base-cased with its MLM head: 108.3M


def test_lstm_flops_count_every_gate_weight():
    s = PROFILES["paper"].lstm
    model = build_model(RunSpec("baseline"), plan.PTB_VOCAB, s)
    weights = sum(p.numel() for name, p in model.rnns.named_parameters() if "weight" in name)
    assert plan.lstm_token_flops(s) == 2.0 * (weights + s.emb * plan.PTB_VOCAB)


@pytest.mark.parametrize("name", ["paper", "cpu", "dryrun"])
def test_plan_has_a_row_per_notebook_and_counts_every_job(name):
    profile = PROFILES[name]
    table = plan.plan(profile)
    assert list(table["notebook"])[-1] == "total" and len(table) == 10
    total = table.set_index("notebook").loc["total"]
    assert total["jobs"] == len(all_specs(profile)) + len(TRAINED)
    assert (table["device_hours"] >= 0).all() and total["device_hours"] > 0
    faster = plan.plan(profile, {k: 10 * v for k, v in plan.ASSUMED_TFLOPS.items()})
    assert faster.iloc[-1]["device_hours"] == pytest.approx(total["device_hours"] / 10)


def test_paper_costs_more_than_cpu():
    paper, cpu = (plan.plan(PROFILES[n]).iloc[-1] for n in ("paper", "cpu"))
    assert paper["PFLOP"] > 100 * cpu["PFLOP"] and paper["device_memory_GB"] > cpu["device_memory_GB"]


@pytest.mark.slow
def test_measure_times_each_kind_of_work_on_this_device():
    rates = plan.measure(PROFILES["dryrun"], device="cpu", steps=1)
    assert set(rates) == set(plan.ASSUMED_TFLOPS) and all(r > 0 for r in rates.values())


def test_cli_prints_the_table(capsys):
    assert plan.main(["--profile", "paper"]) == 0
    out = capsys.readouterr().out
    assert "assumed" in out and "05_chrono_init" in out and "| total" in out
    assert "GPU-hours at the TFLOP/s above" in out and "the GPU's memory one job needs" in out
    table = plan.plan(PROFILES["paper"]).set_index("notebook")
    hours, longest = table.loc["total", "device_hours"], table.loc["total", "longest_job_hours"]
    assert f"wall clock on 1 GPU: about {hours:.1f} h" in out
    assert f"wall clock on 8 GPUs: about {max(hours / 8, longest):.1f} h" in out
    assert "features of every window" in table.loc["02_probing_filtered", "disk_for"]  # why 02 needs its disk
    assert table.loc["04_long_range_mlm", "disk_for"] == "" and table.loc["total", "disk_for"] == ""
