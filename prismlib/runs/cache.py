"""``python -m prismlib cache list|verify|clean``: what the caches hold, whether it is intact,
and removing what no profile uses.

``list``
    every job of ``.cache/jobs/`` (profile, kind, spec label, recipe version, state, size,
    age, and whether a current profile still uses it), then the encoder-states and
    frozen-layer caches per profile, the entries moved aside, and the committed run records
    of ``results/<profile>/runs/`` (:mod:`prismlib.records`: state, commit, date, wall time,
    in use);
``verify``
    a full digest check of every cached file (:func:`prismlib.artifacts.check`) and of every
    committed run record (a refused record is named, never moved: git keeps it); with
    ``--move-aside`` the broken entries are moved to ``.cache/quarantine/`` (what reading
    them would do). Exit status 1 when anything is wrong;
``clean``
    removes the job entries no current profile uses, the states of profiles that no longer
    exist, partial files left by an interrupted save, and the quarantine (``--dry-run``:
    only say what would go).

"In use" is exact for LSTM jobs (their keys are recomputed from every profile's grid) and
for states of an existing profile; a section-4 arm counts as in use when its profile,
encoder, recipe version and settings are the current ones (the key also hashes the
tokenised corpus, which only the notebooks build). A profile's encoders
(:func:`profile_encoders`) are its ``encoder`` and, when it pretrains one, every committed
pretraining of its job profile (``pretrained-<key>``): section 4 runs on that one, and its
states and trained arms are kept.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prismlib.artifacts import DIGEST_SUFFIX, QUARANTINE, check, move_aside
from prismlib.paths import cache_dir, output_root
from prismlib.probing.encoders import PRETRAINED_PREFIX
from prismlib.profiles import PROFILES, Profile
from prismlib.records import PRETRAIN, RUNS
from prismlib.runs.cli import CommandParser


@dataclass
class Entry:
    """One cached thing: a job folder, a states file or a frozen-layer cache."""

    kind: str
    path: Path
    profile: str
    label: str
    recipe: int | None
    state: str
    used: bool

    @property
    def size(self) -> int:
        """Bytes on disk."""
        if self.path.is_file():
            return self.path.stat().st_size
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())

    @property
    def age_days(self) -> float:
        """Days since the entry last changed."""
        return (time.time() - self.path.stat().st_mtime) / 86400


def _lstm_keys() -> dict[str, str]:
    """Key -> the (first) profile whose grid, or doubling check, trains that LSTM job."""
    from prismlib.lstm.claims.doubling import doubling_jobs
    from prismlib.lstm.claims.grid import all_specs
    from prismlib.lstm.job import jobs_for

    keys: dict[str, str] = {}
    for p in PROFILES.values():
        for j in jobs_for(all_specs(p), p.lstm, p.job_profile) + doubling_jobs(p)[1]:
            keys.setdefault(j.key, p.job_profile)
    return keys


def _dyck_keys() -> set[str]:
    """The keys of every profile's Dyck-2 jobs (notebook 10)."""
    from prismlib.lstm.iclr.dyck_training import dyck_jobs

    return {j.key for p in PROFILES.values() for j in dyck_jobs(p.iclr.dyck, p.name)}


def _record_folders() -> Iterator[tuple[str, Path]]:
    """``(profile, runs folder)`` of every profile that keeps committed run records."""
    from prismlib.paths import output_root
    from prismlib.records import RUNS

    for name in sorted({p.job_profile for p in PROFILES.values() if p.lstm.records}):
        yield name, output_root() / "results" / name / RUNS


def list_records() -> int:
    """Print the committed run records of every profile: label, state, commit, date, wall time, in use."""
    from prismlib.records import records_size, scan

    keys = _lstm_keys()
    for _, runs in _record_folders():
        states = scan(runs)
        usable = sum(s.problem is None for s in states)
        print(f"committed runs {runs}: {len(states)} records ({usable} usable), {_human(records_size(runs) if runs.exists() else 0)}")
        for s in states:
            r = s.record or {}
            prov = r.get("provenance", {})
            state = "ok" if s.problem is None else "REFUSED"
            when = f"{str(prov.get('commit', ''))[:10]} {str(prov.get('date', ''))[:10]} {prov.get('wall_seconds', 0) / 60:5.1f} min"
            print(f"  {s.key} {str(r.get('label', '?'))[:40]:40s} {state:8s} {when if r else '':32s} {'yes' if s.key in keys else 'no'}")
            if s.problem is not None:
                print(f"    {s.problem}")
    return 0


def verify_records() -> int:
    """The number of committed records that must not be used (each named in one line)."""
    from prismlib.records import scan

    bad = 0
    for _, runs in _record_folders():
        for s in scan(runs):
            if s.problem is not None:
                bad += 1
                print(s.problem)
    return bad


def section4_encoders(profile: Profile) -> set[str]:
    """The encoder folder names section 4 of ``profile`` trains and encodes with (``/`` as
    ``--``): each committed pretraining of its job profile, ``pretrained-<key>``
    (``results/<job profile>/runs/pretrain/<key>``), when ``profile.prism.pretrained_encoder``
    (the one it reads is among them; its key needs the tokenised corpus), else its ``encoder``."""
    if not profile.prism.pretrained_encoder:
        return {profile.encoder.replace("/", "--")}
    records = output_root() / "results" / profile.job_profile / RUNS / PRETRAIN
    return {PRETRAINED_PREFIX + d.name for d in sorted(records.glob("*")) if d.is_dir()}


def profile_encoders(profile: Profile) -> set[str]:
    """Every encoder folder name ``profile``'s notebooks encode with: its ``encoder`` and
    :func:`section4_encoders`."""
    return {profile.encoder.replace("/", "--")} | section4_encoders(profile)


def _arm_in_use(spec: dict[str, Any]) -> bool:
    from prismlib.prism.arms import RECIPE_VERSION, recipe_settings

    p = PROFILES.get(spec.get("profile", ""))
    if p is None or spec.get("recipe", 1) != RECIPE_VERSION or spec.get("encoder") not in section4_encoders(p):
        return False
    return json.loads(json.dumps(recipe_settings(p.prism), default=list)) == spec.get("settings")


def _job_entries(root: Path) -> Iterator[Entry]:
    from prismlib.lstm.job import RECIPE_VERSION
    from prismlib.lstm.timescales import describe

    keys, dyck_keys = _lstm_keys(), _dyck_keys()
    for folder in sorted(p for p in (root / "jobs").glob("*") if p.is_dir()):
        try:
            spec = json.loads((folder / "spec.json").read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            spec = {}
        state = "done" if (folder / "done.pt").exists() else "partial" if (folder / "partial.pt").exists() else "empty"
        if spec.get("kind") == "mlm-arm":
            label = f"arm {spec.get('arm')} seed {spec.get('seed', 0)}"
            yield Entry("mlm arm", folder, spec.get("profile", "?"), label, spec.get("recipe", 1), state, _arm_in_use(spec))
        elif spec.get("kind") == "dyck":
            label = f"Dyck-2 {spec.get('model')} seed {spec.get('seed')}"
            yield Entry("dyck", folder, spec.get("profile", "?"), label, spec.get("recipe", 1), state, folder.name in dyck_keys)
        elif "spec" in spec:
            s = spec["spec"]
            label = f"{describe(s['variant'], s.get('T'), s.get('fixed', False), s.get('freeze', 'input_forget'))} seed {s.get('seed', 0)}"
            version = spec.get("recipe", 1)
            profile = keys.get(folder.name, spec.get("profile", "?"))
            yield Entry("lstm", folder, profile, label, version, state, folder.name in keys and version == RECIPE_VERSION)
        else:
            yield Entry("unknown", folder, "?", "(no spec.json)", None, state, False)


def _states_in_use(folder: str, arms: set[str]) -> bool:
    """Whether a states folder is in use: ``<encoder>`` of a profile's encoders
    (:func:`profile_encoders`); ``<encoder>+<arm>`` (an untrained arm) of a section-4 encoder
    (:func:`section4_encoders`); ``<encoder>+<arm>-<profile>-<job key>[@previous]`` (a trained
    arm) of an arm job in ``arms`` (the keys in use)."""
    encoder, _, arm = folder.partition("+")
    if not arm:
        return encoder in set().union(*map(profile_encoders, PROFILES.values()))
    trained = re.search(r"-([0-9a-f]{16})(@previous)?$", arm)
    return trained.group(1) in arms if trained else encoder in set().union(*map(section4_encoders, PROFILES.values()))


def _states_entries(root: Path, arms: set[str]) -> Iterator[Entry]:
    for path in sorted((root / "states").rglob("layer*.pt")):
        profile = "-".join(path.stem.split("-")[1:-1]) or "?"  # layer<i>-<profile>-<digest>
        encoder = path.relative_to(root / "states").parts[0]
        task = "/".join(path.relative_to(root / "states").parts[1:3])
        yield Entry(
            "states",
            path,
            profile,
            f"{encoder} {task} {path.stem.split('-')[0]} ({path.stem.split('-')[-1][:8]})",  # two texts' states differ in digest
            None,
            "done",
            profile in PROFILES and _states_in_use(encoder, arms),
        )
    for folder in sorted((root / "mlm").glob("states-*")):
        used = any(folder.name.startswith(f"states-{name}-") for name in set().union(*map(section4_encoders, PROFILES.values())))
        state = "done" if (folder / "states.npy").exists() else "partial"
        yield Entry("frozen states", folder, "?", folder.name, None, state, used)


KINDS = ("lstm", "dyck", "mlm arm", "states", "frozen states", "unknown")
"""The order of the kinds in ``cache list``."""


def entries(root: Path | None = None) -> list[Entry]:
    """Every cached job and state under ``root`` (default ``.cache/``), grouped by profile,
    then kind (:data:`KINDS`), then label (a seed's number in its order: seed 2 before seed 10)."""
    root = Path(root or cache_dir())
    jobs = list(_job_entries(root))
    arms = {e.path.name for e in jobs if e.kind == "mlm arm" and e.used}
    rows = [*jobs, *_states_entries(root, arms)]
    return sorted(rows, key=lambda e: (e.profile, KINDS.index(e.kind) if e.kind in KINDS else len(KINDS), _natural(e.label), str(e.path)))


def _natural(text: str) -> list[tuple[int, int | str]]:
    """``text`` split into words and numbers, numbers compared as numbers."""
    return [(0, int(w)) if w.isdigit() else (1, w) for w in re.split(r"(\d+)", text) if w]


def _files(entry: Entry) -> list[Path]:
    """The digested files of an entry (checkpoints, states, arrays)."""
    if entry.path.is_file():
        return [entry.path]
    return sorted(p for p in entry.path.rglob("*") if p.suffix in (".pt", ".npy") and not p.name.endswith(".tmp"))


def problems(entry: Entry) -> list[str]:
    """What is wrong with ``entry``'s files (a file without a digest is not a problem: it was
    written before digests and is adopted when read)."""
    out = []
    if entry.kind in ("lstm", "mlm arm") and entry.state == "done":
        from prismlib.jobcache import entry_problem

        problem = entry_problem(entry.path, entry.path.name)
        if problem is not None:
            out.append(problem)
    for path in _files(entry):
        if entry.kind in ("lstm", "mlm arm") and path.name == "done.pt":
            continue  # entry_problem checked it
        problem = check(path)
        if problem not in (None, "no digest"):
            out.append(problem if path == entry.path else f"{path.relative_to(entry.path)}: {problem}")
    return out


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def list_cache(root: Path, profile_name: str | None) -> int:
    rows = [e for e in entries(root) if profile_name is None or e.profile == profile_name]
    print(f"cache {root}: {len(rows)} entries, {_human(sum(e.size for e in rows))}")
    print(f"{'kind':14s} {'profile':9s} {'label':44s} {'recipe':>6s} {'state':8s} {'size':>9s} {'age':>7s}  in use")
    for i, e in enumerate(rows):
        if i and e.profile != rows[i - 1].profile:
            print()
        recipe = "" if e.recipe is None else str(e.recipe)
        print(
            f"{e.kind:14s} {e.profile:9s} {e.label[:44]:44s} {recipe:>6s} {e.state:8s} {_human(e.size):>9s} "
            f"{e.age_days:6.1f}d  {'yes' if e.used else 'no'}"
        )
    aside = sorted((root / QUARANTINE).glob("*")) if (root / QUARANTINE).exists() else []
    if aside:
        print(f"moved aside ({root / QUARANTINE}): {len(aside)} entries; `python -m prismlib cache clean` removes them")
    return list_records()


def verify_cache(root: Path, move: bool) -> int:
    rows = entries(root)
    bad = verify_records()
    for e in rows:
        for problem in problems(e):
            bad += 1
            if move and e.path.exists():
                move_aside(e.path, problem, log=print)
            elif not move:
                print(f"{e.path}: {problem}")
    checked = sum(len(_files(e)) for e in rows)
    if bad and not move:
        print(
            f"{bad} problem(s) in {checked} files; `python -m prismlib cache verify --move-aside` moves the broken entries "
            "aside, and the next run recomputes them"
        )
        return 1
    print(f"{checked} files checked" + (f"; {bad} broken entries moved aside" if bad else ": all match their digests"))
    return 1 if bad else 0


def clean_cache(root: Path, dry_run: bool) -> int:
    doomed: list[tuple[Path, str]] = [
        (e.path, f"{e.kind} {e.profile} {e.label}: no current profile uses it") for e in entries(root) if not e.used
    ]
    doomed += [(p, "left by an interrupted save") for p in root.rglob("*.tmp")]
    if (root / QUARANTINE).exists():
        doomed += [(p, "moved aside earlier") for p in sorted((root / QUARANTINE).glob("*"))]
    total = 0
    for path, why in doomed:
        if not path.exists() and not path.is_symlink():
            continue
        size = path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        total += size
        print(f"{'would remove' if dry_run else 'removed'} {path} ({_human(size)}): {why}")
        if not dry_run:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
                side = path.with_name(path.name + DIGEST_SUFFIX)
                side.unlink(missing_ok=True)
    verb = "would free" if dry_run else "freed"
    print(f"{len(doomed)} entries, {verb} {_human(total)}" + (" (run without --dry-run to remove them)" if dry_run and doomed else ""))
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m prismlib cache list|verify|clean``."""
    parser = CommandParser(
        prog="python -m prismlib cache", description=(__doc__ or "").replace("``", ""), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, default=None, help="the cache folder (default: .cache of the checkout)")
    sub = parser.add_subparsers(dest="what", required=True, metavar="{list,verify,clean}")
    ls = sub.add_parser("list", help="what is cached, per profile")
    ls.add_argument("--profile", default=None, help="only this profile's entries")
    v = sub.add_parser("verify", help="check every cached file against its digest")
    v.add_argument("--move-aside", action="store_true", help="move broken entries to .cache/quarantine/")
    c = sub.add_parser("clean", help="remove entries no current profile uses (and the quarantine)")
    c.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    args = parser.parse_args(argv)
    root = Path(args.cache) if args.cache else cache_dir()
    if args.what == "list":
        return list_cache(root, args.profile)
    if args.what == "verify":
        return verify_cache(root, args.move_aside)
    return clean_cache(root, args.dry_run)
