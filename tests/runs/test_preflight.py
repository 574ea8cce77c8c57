"""The pre-flight check of ``reproduce`` (prismlib.runs.preflight): each missing dataset named
with its fix, before any kernel starts."""

from __future__ import annotations

import pytest

from prismlib.paths import OUTPUT_ENV, project_root


def test_every_notebook_names_what_it_needs():
    """A notebook missing from ``NEEDS`` asks for every dataset and the encoder (notebook 10
    did: a machine holding only PTB could not run it)."""
    from prismlib.runs.preflight import NEEDS, needs

    numbers = sorted(p.name[:2] for p in (project_root() / "notebooks").glob("[0-9][0-9]_*.py"))
    assert numbers and sorted(NEEDS) == numbers
    assert needs(["10_multi_timescale_iclr"]) == (["ptb"], False)


@pytest.mark.slow  # (as in test_reproduce.py, whose tests `make test-fast` leaves out)
def test_preflight_names_each_problem_and_its_fix(tmp_path, monkeypatch, capsys):
    from prismlib.__main__ import main
    from prismlib.profiles import get_profile
    from prismlib.runs.preflight import needs, preflight_problems

    assert needs(["05_chrono_init", "06_fixed_bias"]) == (["ptb"], False)
    assert needs(["01_spectral_filters"]) == (["wikitext103"], True)
    monkeypatch.setenv("PRISMLIB_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path / "out"))
    [line] = preflight_problems(get_profile("smoke"), ["05_chrono_init"])
    assert "nowhere does not exist" in line and "PRISMLIB_DATA" in line and "data fetch" in line
    (tmp_path / "nowhere").mkdir()
    lines = preflight_problems(get_profile("smoke"), ["05_chrono_init"])
    assert [ln.split(" ")[0] for ln in lines] == ["ptb/ptb.train.txt", "ptb/ptb.valid.txt", "ptb/ptb.test.txt"]
    assert all(ln.endswith("run `python -m prismlib data fetch ptb`") for ln in lines)
    import papermill

    def no_kernel(*args, **kwargs):
        raise AssertionError("a notebook ran before the pre-flight check stopped the run")

    monkeypatch.setattr(papermill, "execute_notebook", no_kernel)  # (was: done within 10 s, a guess on a busy machine)
    assert main(["reproduce", "--profile", "smoke", "--only", "05"]) == 1  # before any kernel starts
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("prismlib reproduce: error: ptb/ptb.train.txt is missing") and len(err) == 3
    assert not (tmp_path / "out" / "results" / "smoke").exists()
