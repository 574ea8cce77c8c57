"""prismlib.devices: the device and the thread setting."""

from __future__ import annotations

import torch

from prismlib.devices import one_thread, resolve_device, torch_threads


def test_threads_are_restored_and_devices_resolved():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
    one_thread()
    assert torch.get_num_threads() == 1
    torch.set_num_threads(before)
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
