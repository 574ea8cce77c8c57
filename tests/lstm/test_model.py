"""The AWD-style LM (prismlib.lstm.model): fixed biases stay fixed, the fused kernel, weight drop,
the adaptive softmax, the freeze conventions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lstm_fixtures import VOCAB, random_ids, tiny_lstm

from prismlib import lstm
from prismlib.lstm import forget_gate_biases

TINY = tiny_lstm(optimizer="ntasgd", curve_every=2, curve_tokens=1000, epochs=2, steps_per_epoch=3, cutoffs=(), average_last=0)


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def _fixed_entries(model: lstm.LSTMLM) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [tuple(t.detach().clone() for t in r.effective_biases()) for r in model.rnns]


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "asgd"])
def test_fixed_biases_stay_bit_identical_under_weight_decay(optimizer):
    spec = lstm.RunSpec("layerwise", 20.0, fixed=True, seed=0)
    model = lstm.build_model(spec, VOCAB, TINY)
    before = _fixed_entries(model)
    weights_before = [r.weight_hh_l0_raw.detach().clone() for r in model.rnns]
    opt = {
        "sgd": lambda p: torch.optim.SGD(p, lr=1.0, momentum=0.9, weight_decay=0.1),
        "adam": lambda p: torch.optim.Adam(p, lr=0.05, weight_decay=0.1),
        "asgd": lambda p: torch.optim.ASGD(p, lr=1.0, t0=0, lambd=0.0, weight_decay=0.1),
    }[optimizer](model.parameters())
    x = torch.as_tensor(random_ids(4 * 9)).view(4, 9)
    for _ in range(5):
        out = model(x[:, :-1])
        loss = model.nll(out.last_dropped, x[:, 1:]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = _fixed_entries(model)
    for r, (ih0, hh0), (ih1, hh1), w0 in zip(model.rnns, before, after, weights_before):
        h = r.hidden_size
        assert torch.equal(ih1[: 2 * h], ih0[: 2 * h]) and torch.equal(hh1[: 2 * h], hh0[: 2 * h])
        assert torch.equal(hh1[: 2 * h], torch.zeros(2 * h))
        assert not torch.equal(ih1[2 * h :], ih0[2 * h :]) and not torch.equal(hh1[2 * h :], hh0[2 * h :])
        assert not torch.equal(r.weight_hh_l0_raw, w0)
        assert r.bias_ih_l0_raw.grad[: 2 * h].abs().max() == 0


def test_a_model_that_ran_with_gradients_can_be_deep_copied():
    # the memory curve (prismlib.lstm.ablation.cell_state_change) deep-copies a model; a forward pass
    # with gradients used to leave computed tensors in the layers' _flat_weights, which cannot be copied
    import copy

    model = lstm.build_model(lstm.RunSpec("layerwise", 20.0, fixed=True, seed=0), VOCAB, TINY)
    x = torch.as_tensor(random_ids(4 * 9)).view(4, 9)
    model.nll(model(x[:, :-1]).last_dropped, x[:, 1:]).mean().backward()
    twin = copy.deepcopy(model)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), twin.state_dict().values()))


def test_initialised_biases_do_train():
    model = lstm.build_model(lstm.RunSpec("layerwise", 20.0, fixed=False), VOCAB, TINY)
    b0 = forget_gate_biases(list(model.rnns))
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    x = torch.as_tensor(random_ids(40)).view(4, 10)
    out = model(x[:, :-1])
    model.nll(out.last_dropped, x[:, 1:]).mean().backward()
    opt.step()
    assert all(not torch.equal(a, b) for a, b in zip(b0, forget_gate_biases(list(model.rnns))))


@pytest.mark.parametrize("fixed", [False, True])
def test_uses_fused_lstm_kernel(fixed):
    model = lstm.build_model(lstm.RunSpec("gradient", 20.0, fixed=fixed), VOCAB, TINY)
    model.train()
    x = torch.as_tensor(random_ids(4 * 12)).view(4, 12)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        model.log_probs(model(x).last_dropped).sum().backward()
    names = [e.name for e in prof.events()]
    assert names.count("aten::lstm") == len(model.rnns)
    assert "aten::lstm_cell" not in names and "aten::_thnn_fused_lstm_cell" not in names


def test_weight_drop_is_random_in_training_and_off_in_eval():
    model = lstm.LSTMLM(VOCAB, 6, 10, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0.5)
    x = torch.as_tensor(random_ids(2 * 7)).view(2, 7)
    torch.manual_seed(0)
    a, b = model(x).last_dropped, model(x).last_dropped
    assert not torch.allclose(a, b)
    a.sum().backward()
    assert model.rnns[0].weight_hh_l0_raw.grad is not None
    model.eval()
    assert torch.equal(model(x).last_dropped, model(x).last_dropped)


def test_adaptive_softmax_is_normalised_tied_and_frequency_ordered():
    counts = np.bincount(random_ids(500, 9), minlength=VOCAB)
    rank = lstm.frequency_rank(counts)
    assert counts[rank.argsort().numpy()].tolist() == sorted(counts, reverse=True)  # rank 0 = most frequent
    torch.manual_seed(0)
    model = lstm.LSTMLM(VOCAB, 6, 10, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0, cutoffs=(8, 20), rank=rank)
    x = torch.as_tensor(random_ids(2 * 9)).view(2, 9)
    logp = model.log_probs(model(x).last_dropped)
    torch.testing.assert_close(logp.exp().sum(-1), torch.ones(2, 9))
    # tied: the input embedding of word w is its output row (head row or cluster row, by rank)
    word = int(rank.argsort()[0])  # the most frequent word sits in the head's first row
    torch.testing.assert_close(model.embedding_matrix()[word], model.adaptive.head.weight[0])
    assert not hasattr(model, "encoder") and not hasattr(model, "decoder")
    model.nll(model(x[:, :-1]).last_dropped, x[:, 1:]).mean().backward()
    assert model.adaptive.head.weight.grad is not None
    with pytest.raises(ValueError, match="permutation"):
        lstm.LSTMLM(VOCAB, 6, 10, 2, cutoffs=(8, 20), rank=torch.zeros(VOCAB, dtype=torch.long))
    with pytest.raises(ValueError, match="cutoffs must increase"):
        lstm.LSTMLM(VOCAB, 6, 10, 2, cutoffs=(20, 8))


@pytest.mark.parametrize("freeze", ["input_forget", "forget", "all"])
def test_each_freeze_convention_freezes_exactly_its_entries_and_keeps_the_fused_kernel(freeze):
    spec = lstm.RunSpec("layerwise", 20.0, fixed=True, seed=0, freeze=freeze)
    model = lstm.build_model(spec, VOCAB, TINY)
    model.train()
    x = torch.as_tensor(random_ids(4 * 12)).view(4, 12)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        model.nll(model(x[:, :-1]).last_dropped, x[:, 1:]).mean().backward()
    names = [e.name for e in prof.events()]
    assert names.count("aten::lstm") == len(model.rnns) and "aten::lstm_cell" not in names
    gates = {"input_forget": "if", "forget": "f", "all": "ifgo"}[freeze]
    for r in model.rnns:
        h = r.hidden_size
        expected = torch.zeros(4 * h, dtype=torch.bool)
        for k, g in enumerate("ifgo"):
            expected[k * h : (k + 1) * h] = g in gates
        assert torch.equal(r.fixed_mask, expected)
        for grad in (r.bias_ih_l0_raw.grad, r.bias_hh_l0_raw.grad):
            assert (grad[expected] == 0).all()  # frozen: no gradient at all
            assert (grad[~expected] != 0).all()  # every other entry trains
        b_ih, b_hh = r.effective_biases()
        b_f = (b_ih + b_hh)[h : 2 * h]
        assert torch.allclose((b_ih + b_hh)[:h], -b_f)  # b_i = -b_f at the start in every convention
    assert spec.label == ("layerwise T=20 (fixed)" if freeze == "input_forget" else f"layerwise T=20 (fixed: {freeze})")
