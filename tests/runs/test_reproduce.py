"""``python -m prismlib reproduce``: a failed or interrupted run never replaces the last good
executed notebook, and the manifest records each notebook's own provenance and failures."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from prismlib.paths import OUTPUT_ENV, project_root
from prismlib.runs.manifest import changed_sources, read_manifest
from prismlib.runs.reproduce import NotebookFailed, current_result, incomplete, run_notebooks, short_commit

pytestmark = pytest.mark.slow  # `make test-fast` leaves these out (notebooks, subprocesses, a browser, real data)

_LINES = (project_root() / "notebooks" / "05_chrono_init.py").read_text().splitlines()
HEADER = "\n".join(_LINES[: _LINES.index("# ---", 1) + 1])  # the jupytext header with its kernelspec

SOURCE = (
    HEADER
    + """

# %% [markdown]
# # 01 · A tiny notebook
#
# It succeeds, fails or sleeps as its environment asks.

# %% tags=["parameters"]
import os

profile = os.environ.get("PRISMLIB_PROFILE", "cpu")

# %%
import pathlib
import time

from prismlib.progress import progress_bar

for _ in progress_bar(range(3), desc="steps"):
    pass
if os.environ.get("TINY_FAIL"):
    raise ValueError("asked to fail")
if os.environ.get("TINY_SLEEP"):
    pathlib.Path(os.environ["TINY_SLEEP"]).write_text("started")
    time.sleep(120)
print("done", profile)
"""
)


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    (notebooks / "01_tiny.py").write_text(SOURCE)
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path / "out"))
    monkeypatch.delenv("TINY_FAIL", raising=False)
    monkeypatch.delenv("TINY_SLEEP", raising=False)
    results = tmp_path / "out" / "results" / "smoke"
    return {"notebooks": notebooks, "result": results / "01_tiny.ipynb", "manifest": results / "manifest.json"}


def test_a_failed_run_keeps_the_last_good_notebook(tiny, monkeypatch):
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    good = tiny["result"].read_bytes()
    nb = nbformat.reads(good.decode(), as_version=4)
    assert incomplete(nb) is None and nb.metadata["prismlib"]["complete"]
    assert "it/s" not in good.decode()  # the progress bar went to the log, not the notebook
    record = read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]
    assert {"commit", "run_id", "started", "seconds", "device", "packages", "sources"} <= set(record)
    assert "failure" not in record and changed_sources(record, tiny["notebooks"] / "01_tiny.py") == []
    log = tiny["manifest"].parents[2] / ".cache" / "logs" / "smoke" / "01_tiny.log"
    assert "steps: 100%" in log.read_text()

    monkeypatch.setenv("TINY_FAIL", "1")
    with pytest.raises(NotebookFailed, match="ValueError: asked to fail"):
        run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False, force=True)
    assert tiny["result"].read_bytes() == good  # byte for byte
    after = read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]
    assert after["failure"]["error"].startswith("ValueError: asked to fail")
    assert {k: v for k, v in after.items() if k != "failure"} == record  # the good run's provenance
    assert not list(tiny["result"].parent.glob(".*")) and not list(tiny["result"].parent.glob("*.lock"))

    monkeypatch.delenv("TINY_FAIL")
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)  # after a failure it runs again, no --force needed
    assert "failure" not in read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]


def test_a_current_result_is_skipped_in_one_line_and_a_changed_notebook_runs_again(tiny, capsys):
    """A forced re-run is told apart by its ``run_id``, not by ``started``: that has whole
    seconds, and the tiny notebook runs in under one, so two runs can share it."""
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    first = read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]
    capsys.readouterr()
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "01_tiny: current (run " in out[0] and "--force" in out[0], out
    assert len(out[0]) <= 100 and f" at {short_commit(first['commit'])})" in out[0] and first["commit"][:12] not in out[0], out
    assert read_manifest(tiny["manifest"])["notebooks"]["01_tiny"] == first  # not run again
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False, force=True)
    again = read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]
    assert again["run_id"] != first["run_id"]  # ran again and recorded again
    assert nbformat.read(tiny["result"], as_version=4).metadata["prismlib"]["run_id"] == again["run_id"]
    src = tiny["notebooks"] / "01_tiny.py"
    src.write_text(src.read_text().replace('print("done", profile)', 'print("done again", profile)'))
    capsys.readouterr()
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    assert "done in" in capsys.readouterr().out  # the changed notebook ran
    tiny["result"].unlink()  # no result: it runs
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    assert tiny["result"].exists()


def test_a_result_is_not_current_once_another_claim_twin_is_there(tiny, monkeypatch, capsys):
    """The notebooks never train the claims' own twins, and an installment that commits one
    can move a verdict: a result records the twins it read and runs again when they differ."""
    from prismlib.runs import installments

    there = ["aaaa"]
    monkeypatch.setattr(installments, "twins_read", lambda profile, stem: list(there))
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    first = read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]
    assert first["twins"] == ["aaaa"]
    capsys.readouterr()
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    assert "01_tiny: current (run " in capsys.readouterr().out  # the same twins: current
    there.append("bbbb")
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    assert "done in" in capsys.readouterr().out  # a new twin: it ran again
    assert read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]["twins"] == ["aaaa", "bbbb"]
    there.clear()  # none read: nothing recorded
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    assert "twins" not in read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]


def test_an_interrupted_run_keeps_the_last_good_notebook(tiny, tmp_path):
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    good = tiny["result"].read_bytes()
    started = tmp_path / "started"
    env = {**os.environ, "TINY_SLEEP": str(started), "PYTHONPATH": str(project_root())}
    code = (  # Ctrl-C as in a terminal, also where this test runs with SIGINT ignored (a background job)
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "import sys; from pathlib import Path; from prismlib.__main__ import main; "
        "from prismlib.runs import reproduce as r; "
        f"r.run_notebooks.__kwdefaults__.update(check=False, notebooks_dir=Path({str(tiny['notebooks'])!r})); "
        "sys.exit(main(['reproduce', '--profile', 'smoke', '--force']))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300  # a kernel starts slowly on a loaded machine
    while not started.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal: the runner and its kernel
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("prismlib: interrupted")
    assert tiny["result"].read_bytes() == good
    failure = read_manifest(tiny["manifest"])["notebooks"]["01_tiny"]["failure"]
    assert failure["error"] == "interrupted (Ctrl-C)"
    log = (tiny["manifest"].parents[2] / failure["log"]).read_text()
    assert "Traceback" not in log and "ZMQError" not in log and log.endswith("interrupted (Ctrl-C)\n"), log


def test_incomplete_finds_errors_and_cells_that_never_ran():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1", execution_count=1), nbformat.v4.new_code_cell("2")]
    assert incomplete(nb) == "code cell 2 of 2 did not execute"
    nb.cells[1].execution_count = 2
    assert incomplete(nb) is None
    nb.cells[1].outputs = [nbformat.v4.new_output("error", ename="KeyError", evalue="'x'", traceback=[])]
    assert incomplete(nb) == "code cell 2 of 2 raised KeyError: 'x'"


def test_a_current_result_is_said_in_a_few_words_with_the_short_commit(tmp_path):
    from prismlib.runs.manifest import source_digests

    assert short_commit("4dc06f4" * 5 + "+dirty") == "4dc06f4+dirty" and short_commit("4dc06f4" * 5) == "4dc06f4"
    assert short_commit(None) == short_commit("") == "?"
    src, result = tmp_path / "01_tiny.py", tmp_path / "01_tiny.ipynb"
    src.write_text("print(1)\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)", execution_count=1)])
    nbformat.write(nb, result)
    record = {"sources": source_digests(src), "device": "cpu", "started": "2025-05-02T14:03:11+00:00", "commit": "4dc06f4" * 5}
    assert current_result(record, src, result, "cpu") == "run 2025-05-02 at 4dc06f4"
    assert current_result(record, src, result, "cuda") is None  # another device
    assert current_result({k: v for k, v in record.items() if k != "commit"}, src, result, "cpu") == "run 2025-05-02 at ?"
    assert current_result(record, src, result, "cpu", ["aaaa"]) is None  # a claim twin it did not read is there now
    assert current_result({**record, "twins": ["aaaa"]}, src, result, "cpu", ["aaaa"]) == "run 2025-05-02 at 4dc06f4"
    assert current_result({**record, "twins": ["aaaa"]}, src, result, "cpu") is None  # the twin it read is gone


def test_an_unknown_only_is_refused_before_the_data_check(monkeypatch, capsys):
    from prismlib.__main__ import main
    from prismlib.runs import preflight

    def no_check(*args, **kwargs):
        raise AssertionError("the data check ran before --only was checked")

    monkeypatch.setattr(preflight, "preflight_problems", no_check)
    for argv in (["reproduce", "--profile", "smoke", "--only", "99"], ["reproduce", "--check-args", "--profile", "smoke", "--only", "99"]):
        assert main(argv) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1, err
        assert err.startswith("prismlib reproduce: error: no notebook matches --only 99; choose from 01, 02"), err
    assert main(["reproduce", "--check-args", "--profile", "smoke", "--only", "05"]) == 0  # checks, runs nothing, says nothing
    assert capsys.readouterr() == ("", "")


def test_check_args_refuses_a_committed_record_that_cannot_be_used_in_one_message(monkeypatch, capsys):
    from prismlib.__main__ import main
    from prismlib.records import BadRecord
    from prismlib.runs import installments

    bad = BadRecord(Path("results/cpu/runs/abc/record.json"), "its bytes do not match SHA256SUMS")
    monkeypatch.setattr(installments, "bad_records", lambda profile, stems: [bad] if any(s.startswith("05") for s in stems) else [])
    assert main(["reproduce", "--check-args", "--profile", "smoke", "--only", "05"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("prismlib reproduce: error: 1 committed run record cannot be used"), err
    assert "git checkout -- results/cpu/runs/abc" in err and 'FRESH=1 ONLY="05"' in err
    assert main(["reproduce", "--check-args", "--profile", "smoke", "--only", "01"]) == 0


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_reproduce_checks_its_arguments_before_the_data_check_and_training(tmp_path):
    venv = tmp_path / "venv"  # an installed venv as far as make can tell: nothing is installed
    venv.mkdir()
    (venv / ".installed").touch()
    dry = subprocess.run(
        ["make", "-n", "-C", str(project_root()), "reproduce", "ONLY=05", f"VENV={venv}", "PY=py"],
        capture_output=True,
        text=True,
        check=True,
    )
    steps = [ln for ln in dry.stdout.splitlines() if ln.startswith("py -m prismlib")]
    assert [" ".join(ln.split()[3:5]) for ln in steps] == [
        "reproduce --check-args",
        "data fetch",
        "train --profile",
        "reproduce --profile",
    ], steps
    assert "--only 05" in steps[0]


def test_the_kernel_traceback_of_a_clean_interrupt_leaves_the_log(tmp_path):
    from prismlib.runs.reproduce import _quiet_interrupt

    log = tmp_path / "01.log"
    log.write_text(
        "steps: 100%|##| 3/3\n[IPKernelApp] ERROR | Exception in message handler:\nTraceback (most recent call last):\n"
        '  File "kernelbase.py", line 508, in dispatch_shell\n    await result\n'
        "zmq.error.ZMQError: Socket operation on non-socket\nKernel died while waiting for execute reply.\n"
    )
    _quiet_interrupt(log)
    assert log.read_text() == "steps: 100%|##| 3/3\nKernel died while waiting for execute reply.\ninterrupted (Ctrl-C)\n"


def test_a_committed_profile_refuses_uncommitted_code_unless_allowed(tiny, monkeypatch):
    from prismlib.runs import reproduce

    monkeypatch.setattr(reproduce, "_git_commit", lambda: "abc123+dirty")
    with pytest.raises(ValueError, match="must come from committed code; commit first, or pass --allow-dirty"):
        run_notebooks("cpu", notebooks_dir=tiny["notebooks"], check=False)
    assert not tiny["result"].parent.parent.joinpath("cpu").exists()  # refused before anything ran
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)  # smoke results are not committed: it runs
    run_notebooks("cpu", notebooks_dir=tiny["notebooks"], check=False, allow_dirty=True)
    record = read_manifest(tiny["result"].parent.parent / "cpu" / "manifest.json")["notebooks"]["01_tiny"]
    assert record["allow_dirty"] is True and record["commit"] == "abc123+dirty"


def test_the_run_ends_with_the_verdict_counts_and_where_to_read_them(tiny, capsys):
    from prismlib.claims import Claim, Test, save_claims
    from prismlib.runs.reproduce import claims_summary
    from prismlib.stats import Interval

    assert claims_summary("smoke") is None  # no notebook wrote claims
    save_claims(
        [Claim("01", "a", "p", (Test(Interval(1.0, 0.5, 1.5, 20)),)), Claim("01", "b", "p", (Test(Interval(-1.0, -1.5, -0.5, 20)),))],
        "smoke",
    )
    run_notebooks("smoke", notebooks_dir=tiny["notebooks"], check=False)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == (
        "[smoke] claims: 1 held, 1 not held, 0 inside noise, 0 not testable of 2; every claim with its effect and gates in "
        "figures/smoke/claims.md, the site with `make report PROFILE=smoke`"
    )


def test_a_run_that_reused_trained_models_keeps_the_time_of_the_last_run_on_an_empty_cache():
    from prismlib.runs.reproduce import cold_fields

    assert cold_fields(0, 8000.0, None) == {"reused_jobs": 0, "cold_seconds": 8000.0}  # trained everything: its own time
    cold = {"seconds": 8000.0, "reused_jobs": 0, "cold_seconds": 8000.0}
    assert cold_fields(9, 900.0, cold) == {"reused_jobs": 9, "cold_seconds": 8000.0}
    assert cold_fields(9, 800.0, {"seconds": 900.0, "reused_jobs": 9, "cold_seconds": 8000.0})["cold_seconds"] == 8000.0
    assert cold_fields(9, 900.0, {"seconds": 7000.0}) == {"reused_jobs": 9, "cold_seconds": 7000.0}  # before reuse was counted
    assert cold_fields(9, 900.0, None) == {"reused_jobs": 9} == cold_fields(9, 900.0, {"seconds": 950.0, "reused_jobs": 2})
