"""Table 3a's period ranges and Figure 3b's snippet (prismlib.spectral.paper)."""

from __future__ import annotations

import torch

from prismlib.spectral import allocate_bands, dct, fig3b_low_pass, low_pass, paper_period, period_range, true_period


def test_period_range_of_the_512_token_bands():
    bands = allocate_bands(512)
    assert [period_range(b, 512, paper_period) for b in bands] == ["256–∞", "32–128", "7.8–28", "2–7.5", "0.5–2"]
    assert [period_range(b, 512, true_period) for b in bands] == ["1024–∞", "128–512", "31–114", "7.9–30", "2–7.9"]


def test_fig3b_low_pass_is_low_pass_across_tokens():
    H = torch.randn(40, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for k in (1, 5, 39):
        out = fig3b_low_pass(H, k)
        assert out.shape == H.shape
        assert torch.allclose(out, low_pass(H, k), atol=1e-12)
        assert dct(out.T)[:, k:].abs().max() < 1e-12  # nothing left from index k on
    assert torch.allclose(fig3b_low_pass(H, 40), H, atol=1e-12)  # k = N keeps everything
