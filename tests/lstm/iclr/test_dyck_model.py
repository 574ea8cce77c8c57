"""The Dyck-2 LSTMs (prismlib.lstm.iclr.dyck_model): the official multi-timescale assignment, frozen."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import invgamma

from prismlib.lstm.iclr import dyck
from prismlib.lstm.iclr.dyck_model import DyckLSTM, build_dyck_model, dyck_timescales


def test_timescales_are_the_official_inverse_gamma_grid_longest_first():
    T = dyck_timescales(8, 1.5, 1.0).numpy()
    official = invgamma.isf(np.linspace(0, 1, 8 + 2), a=1.5, scale=1.0)[1:-1]  # model_dyckn.py's grid
    np.testing.assert_allclose(T, official, rtol=1e-12)
    assert (np.diff(T) < 0).all()


def test_mts_biases_are_set_as_the_official_code_and_never_move_in_training():
    m = build_dyck_model("mts", 6, seed=0)
    T = dyck_timescales(6)
    b_ih, b_hh = m.lstm.effective_biases()
    b_f = -torch.log(torch.expm1(1 / T)).float()
    assert torch.equal(b_ih, torch.zeros(24))  # all of bias_ih zero, g and o too
    torch.testing.assert_close(b_hh[6:12], b_f)
    torch.testing.assert_close(b_hh[:6], -b_f)
    # the effective forget gate at zero input is exp(-1/T): the exp convention
    torch.testing.assert_close(torch.sigmoid(b_ih[6:12] + b_hh[6:12]).double(), torch.exp(-1 / T), rtol=1e-5, atol=1e-6)
    before = [t.clone() for t in m.lstm.effective_biases()]
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    tokens = torch.from_numpy(dyck.encode("([])()")[None])
    for _ in range(3):
        opt.zero_grad()
        m(tokens)[0].pow(2).sum().backward()
        opt.step()
    after = m.lstm.effective_biases()
    assert all(torch.equal(a, b) for a, b in zip(before, after))
    assert not torch.equal(m.readout.weight, build_dyck_model("mts", 6, seed=0).readout.weight)  # the rest trains


def test_baseline_trains_its_biases_and_the_seed_fixes_the_weights():
    a, b, c = build_dyck_model("baseline", 5, 1), build_dyck_model("baseline", 5, 1), build_dyck_model("baseline", 5, 2)
    assert torch.equal(a.lstm.weight_ih_l0, b.lstm.weight_ih_l0) and not torch.equal(a.lstm.weight_ih_l0, c.lstm.weight_ih_l0)
    assert not a.multi_timescale and build_dyck_model("mts", 5, 1).multi_timescale
    assert not bool(a.lstm.fixed_mask.any())
    with pytest.raises(ValueError, match="kind"):
        build_dyck_model("MTS", 5, 1)


def test_outputs_at_real_positions_do_not_depend_on_padding():
    m = build_dyck_model("mts", 7, 0).eval()
    ids = dyck.encode("([])")
    padded = torch.tensor([list(ids) + [dyck.PAD] * 3, list(ids) + [0, 1, 2]])
    logits, _ = m(padded)
    assert logits.shape == (2, 7, dyck.N_TYPES)
    torch.testing.assert_close(logits[0, :4], logits[1, :4])


def test_bad_timescales_are_refused():
    with pytest.raises(ValueError, match="positive"):
        DyckLSTM(3, timescales=torch.tensor([1.0, 0.0, 2.0]))
