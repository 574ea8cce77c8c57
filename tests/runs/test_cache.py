"""``python -m prismlib cache list|verify|clean`` on a cache laid out by hand: what is in use,
what is broken, what cleaning removes (and keeps)."""

from __future__ import annotations

import json

import torch

from prismlib.__main__ import main as cli
from prismlib.artifacts import save_atomic
from prismlib.jobcache import job_key
from prismlib.lstm import RunSpec
from prismlib.lstm.job import RECIPE_VERSION, Job
from prismlib.profiles import PROFILES


def _job_folder(cache, description, key=None):
    folder = cache / "jobs" / (key or job_key(description))
    folder.mkdir(parents=True)
    (folder / "spec.json").write_text(json.dumps(description, default=list))
    save_atomic(folder / "done.pt", model={"w": torch.ones(3)})
    return folder


def _layout(tmp_path):
    cache = tmp_path / ".cache"
    smoke = PROFILES["smoke"]
    used = _job_folder(cache, Job(RunSpec(seed=smoke.lstm.seeds[0]), smoke.lstm, "smoke").describe())
    gone = _job_folder(cache, {**Job(RunSpec(seed=0), smoke.lstm, "smoke").describe(), "recipe": 1})  # an older recipe: no profile uses it
    states = cache / "states" / smoke.encoder.replace("/", "--") / "pos" / "train"
    save_atomic(states / "layer6-smoke-0123456789abcdef.pt", hidden=torch.zeros(2))
    save_atomic(states / "layer6-oldprofile-0123456789abcdef.pt", hidden=torch.zeros(2))
    (cache / "quarantine" / "20260101T000000-jobs-abc").mkdir(parents=True)
    (used / "done.pt.tmp").write_bytes(b"left by a kill")
    return cache, used, gone, states


def test_list_says_what_each_entry_is_and_whether_a_profile_uses_it(tmp_path, capsys):
    cache, used, gone, _ = _layout(tmp_path)
    assert cli(["cache", "--cache", str(cache), "list"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("lstm ")]
    line = {w: next(ln for ln in out.splitlines() if w in ln) for w in ("oldprofile",)}
    assert len(lines) == 2 and all("baseline seed 0" in ln for ln in lines)
    now = next(ln for ln in lines if ln.startswith("lstm           smoke "))
    assert now.rstrip().endswith("yes") and f" {RECIPE_VERSION} " in now
    assert next(ln for ln in lines if ln != now).rstrip().endswith("no")
    assert line["oldprofile"].rstrip().endswith("no")
    assert "moved aside" in out and "1 entries" in out


def test_verify_finds_a_broken_file_names_it_and_moves_it_aside_on_request(tmp_path, capsys):
    cache, used, _, states = _layout(tmp_path)
    assert cli(["cache", "--cache", str(cache), "verify"]) == 0
    assert "all match their digests" in capsys.readouterr().out
    bad = states / "layer6-smoke-0123456789abcdef.pt"
    bad.write_bytes(bad.read_bytes()[:100])
    (used / "done.pt").write_bytes((used / "done.pt").read_bytes()[:-1] + b"x")
    assert cli(["cache", "--cache", str(cache), "verify"]) == 1
    out = capsys.readouterr().out
    assert f"{bad}: truncated or changed" in out and f"{used}: done.pt: " in out and "--move-aside" in out
    assert bad.exists() and used.exists()  # reporting moves nothing
    assert cli(["cache", "--cache", str(cache), "verify", "--move-aside"]) == 1
    assert not bad.exists() and not used.exists()
    assert cli(["cache", "--cache", str(cache), "verify"]) == 0


def test_clean_removes_what_no_profile_uses_after_a_dry_run(tmp_path, capsys):
    cache, used, gone, states = _layout(tmp_path)
    assert cli(["cache", "--cache", str(cache), "clean", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove" in out and gone.exists() and (cache / "quarantine").exists()
    assert cli(["cache", "--cache", str(cache), "clean"]) == 0
    assert not gone.exists() and not (states / "layer6-oldprofile-0123456789abcdef.pt").exists()
    assert not list((cache / "quarantine").iterdir()) and not (used / "done.pt.tmp").exists()
    assert (used / "done.pt").exists() and (states / "layer6-smoke-0123456789abcdef.pt").exists()


def test_list_and_verify_show_the_committed_run_records_and_name_a_refused_one(tmp_path, capsys, monkeypatch):
    from prismlib.records import write_record

    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))
    cpu = PROFILES["cpu"]
    runs = tmp_path / "results" / "cpu" / "runs"
    summary = {
        "label": "baseline seed 0",
        "provenance": {"commit": "a" * 40, "dirty": False, "date": "2026-11-28T00:00:00", "wall_seconds": 1260},
    }
    for spec in (RunSpec(seed=0), RunSpec("pareto", fixed=True, seed=0)):
        job = Job(spec, cpu.lstm, "cpu")
        write_record(runs / job.key, job.key, job.describe(), summary, {"outcome.npz": lambda p: p.write_bytes(b"x")})
    broken = runs / Job(RunSpec("pareto", fixed=True, seed=0), cpu.lstm, "cpu").key
    (broken / "outcome.npz").write_bytes(b"y")
    assert cli(["cache", "--cache", str(tmp_path / ".cache"), "list"]) == 0
    out = capsys.readouterr().out
    assert "2 records (1 usable)" in out and "baseline seed 0" in out and "21.0 min" in out and "REFUSED" in out
    assert cli(["cache", "--cache", str(tmp_path / ".cache"), "verify"]) == 1
    out = capsys.readouterr().out
    assert f"{broken / 'outcome.npz'}: its bytes do not match SHA256SUMS" in out


def test_list_is_grouped_by_profile_and_kind_names_dyck_jobs_and_shows_seeds(tmp_path, capsys):
    from prismlib.lstm.iclr.dyck_training import dyck_jobs

    cache = tmp_path / ".cache"
    smoke = PROFILES["smoke"]
    dyck = dyck_jobs(smoke.iclr.dyck, "smoke")[0]
    _job_folder(cache, dyck.describe())
    for seed in (10, 2):
        _job_folder(cache, {"kind": "mlm-arm", "arm": "prism", "profile": "smoke", "recipe": 2, "seed": seed, "encoder": "x"})
    for seed in (1, 0):
        _job_folder(cache, Job(RunSpec(seed=seed), smoke.lstm, "smoke").describe())
    assert cli(["cache", "--cache", str(cache), "list"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines()[2:] if ln.strip() and not ln.startswith("committed")]
    smoke_lines = [ln for ln in lines if ln[15:24].strip() == "smoke"]
    assert [ln[:14].strip() for ln in smoke_lines] == ["lstm", "lstm", "dyck", "mlm arm", "mlm arm"], lines  # grouped by kind
    assert [ln[25:40].strip() for ln in smoke_lines[:2]] == ["baseline seed 0", "baseline seed 1"]
    assert smoke_lines[2][25:].startswith(f"Dyck-2 {dyck.kind} seed {dyck.seed} ") and "(no spec.json)" not in "".join(lines)
    assert [ln[25:45].split()[-1] for ln in smoke_lines[3:]] == ["2", "10"]  # arm prism seed 2, then 10: numbers as numbers


def test_section_4_on_a_committed_pretraining_is_in_use_and_clean_keeps_it(tmp_path, capsys, monkeypatch):
    """cpu's section 4 runs on its own pretraining (``pretrained-<key>``, not ``profile.encoder``):
    its arms, their states and its frozen states stay; those of a pretraining not committed go."""
    from prismlib.paths import OUTPUT_ENV
    from prismlib.prism.arms import RECIPE_VERSION as ARM_RECIPE
    from prismlib.prism.arms import recipe_settings

    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))
    (tmp_path / "results" / "cpu" / "runs" / "pretrain" / "00ab").mkdir(parents=True)
    cache = tmp_path / ".cache"
    settings = json.loads(json.dumps(recipe_settings(PROFILES["cpu"].prism), default=list))

    def arm(encoder, key):
        spec = {"arm": "baseline", "encoder": encoder, "kind": "mlm-arm", "profile": "cpu", "recipe": ARM_RECIPE, "seed": 0}
        return _job_folder(cache, {**spec, "settings": settings}, key)

    kept, gone = arm("pretrained-00ab", "1" * 16), arm("pretrained-99ff", "2" * 16)
    states = {}
    for folder in ("pretrained-00ab", f"pretrained-00ab+baseline-cpu-{'1' * 16}@previous", "pretrained-00ab+prism_untrained",
                   f"pretrained-99ff+baseline-cpu-{'2' * 16}", "pretrained-99ff+prism_untrained", "pretrained-99ff"):  # fmt: skip
        states[folder] = cache / "states" / folder / "pos" / "test" / "layer4-cpu-0123456789abcdef.pt"
        save_atomic(states[folder], hidden=torch.zeros(2))
    frozen = {k: cache / "mlm" / f"states-pretrained-{k}-0123456789abcdef" for k in ("00ab", "99ff")}
    for folder in frozen.values():
        save_atomic(folder / "states.npy", hidden=torch.zeros(2))
    assert cli(["cache", "--cache", str(cache), "clean"]) == 0
    assert (kept / "done.pt").exists() and not gone.exists()
    assert [k for k, p in states.items() if p.exists()] == list(states)[:3]
    assert frozen["00ab"].exists() and not frozen["99ff"].exists()
