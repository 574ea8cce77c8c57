"""Recipe versions (prismlib.jobcache: code_fingerprint, with_recipe): the code that trains each
job kind is pinned by a fingerprint beside its version, so a change to a training loop cannot
reuse models the old loop trained.

    python tests/core/test_jobcache_recipe_versions.py --update   # pin the current fingerprints (after a
                                                                  # bump, or after confirming results stay identical)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from prismlib.jobcache import code_fingerprint, job_key, with_recipe
from prismlib.lstm import job as lstm_job
from prismlib.lstm.iclr import dyck_training
from prismlib.prism import arms

PINNED = Path(__file__).parents[1] / "fixtures" / "recipe_fingerprints.json"
KINDS = {
    "lstm": (lambda: lstm_job.RECIPE_VERSION, lstm_job.recipe_code, "prismlib/lstm/job.py"),
    "mlm-arm": (lambda: arms.RECIPE_VERSION, arms.recipe_code, "prismlib/prism/arms.py"),
    "dyck": (lambda: dyck_training.DYCK_RECIPE_VERSION, dyck_training.dyck_recipe_code, "prismlib/lstm/iclr/dyck_training.py"),
}


def current() -> dict[str, dict[str, object]]:
    return {kind: {"version": version(), "fingerprint": code_fingerprint(code())} for kind, (version, code, _) in KINDS.items()}


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_code_of_each_recipe_matches_the_fingerprint_pinned_with_its_version(kind):
    pinned = json.loads(PINNED.read_text())[kind]
    now = current()[kind]
    if now != pinned:
        pytest.fail(
            f"the code of the {kind} recipe changed (fingerprint {now['fingerprint']}, version {now['version']}; pinned "
            f"{pinned['fingerprint']} at version {pinned['version']}): bump the recipe version (RECIPE_VERSION in "
            f"{KINDS[kind][2]}) or confirm the change keeps results identical, then pin it with "
            "`python tests/core/test_jobcache_recipe_versions.py --update`"
        )


def _load(tmp_path, name: str, source: str):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("recipe_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.step


def test_the_fingerprint_ignores_docstrings_comments_and_layout_but_not_code(tmp_path):
    base = _load(tmp_path, "a", 'def step(x):\n    """A docstring."""\n    return x + 1  # a comment\n')
    reworded = _load(tmp_path, "b", 'def step(x):\n    """Reworded."""\n    return (\n        x + 1\n    )\n')
    changed = _load(tmp_path, "c", 'def step(x):\n    """A docstring."""\n    return x + 2\n')
    assert code_fingerprint([base]) == code_fingerprint([reworded])
    assert code_fingerprint([base]) != code_fingerprint([changed])


def test_a_recipe_version_enters_the_key_only_from_version_2():
    d = {"spec": {"variant": "baseline"}}
    assert job_key(with_recipe(d, 1)) == job_key(d)
    assert job_key(with_recipe(d, 2)) != job_key(d) != job_key(with_recipe(d, 3))


if __name__ == "__main__" and "--update" in sys.argv:
    PINNED.write_text(json.dumps(current(), indent=1) + "\n")
    print(f"pinned {current()} in {PINNED}")
