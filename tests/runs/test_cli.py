"""Argument errors of every ``python -m prismlib`` command (prismlib.runs.cli): one line on
stderr that names the problem and where the usage is, exit status 2; the usage block only
with ``--help``. Then the entry point's (prismlib.__main__) other user errors: one line, the
traceback with ``--debug``; a GPU profile's name and a missing venv explained."""

from __future__ import annotations

import pytest

from prismlib.__main__ import COMMANDS, main
from prismlib.runs.cli import HINT


def _one_line_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and out == "", out
    assert err.count("\n") == 1 and "usage:" not in err and err.rstrip().endswith(HINT), err
    return err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_wrong_flag_of_every_command_is_one_line_without_the_usage(command, capsys):
    err = _one_line_error([command, "--no-such-flag"], capsys)
    assert err.startswith(f"python -m prismlib {command}: error: "), err


@pytest.mark.parametrize(
    "argv, problem",
    [
        (["train", "--only", "nosuchexperiment"], "argument --only: invalid choice: 'nosuchexperiment'"),
        (["train", "--minutes", "0"], "--minutes must be a positive number of minutes, got 0"),
        (["reproduce", "--profile"], "argument --profile: expected one argument"),
        (["data", "fetch", "nosuchdata"], "unknown dataset(s) nosuchdata; known: ptb"),
        (["cache"], "the following arguments are required: {list,verify,clean}"),
        (["cache", "nosuch"], "argument {list,verify,clean}: invalid choice: 'nosuch'"),
    ],
)
def test_a_bad_value_names_the_problem_in_one_line(argv, problem, capsys):
    assert problem in _one_line_error(argv, capsys)


def test_an_unknown_command_is_one_line_that_names_the_commands(capsys):
    assert main(["nosuch"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "usage" not in err, err
    assert err.startswith("python -m prismlib: error: unknown command 'nosuch'; choose one of data, train") and HINT in err


def test_help_still_prints_the_usage(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--help"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("usage: python -m prismlib train")
    assert main(["--help"]) == 0 and "commands:" in capsys.readouterr().out


@pytest.mark.slow  # (as in test_reproduce.py, whose tests `make test-fast` leaves out)
@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce", "--profile", "nosuch"], "prismlib reproduce: error: unknown profile 'nosuch'; choose one of smoke"),
        (["report", "--profile", "nosuch"], "prismlib report: error: unknown profile 'nosuch'"),
        (["reproduce", "--only", "99"], "prismlib reproduce: error: no notebook matches --only 99; choose from 01, 02"),
        (["train", "--profile", "nosuch"], "prismlib train: error: unknown profile 'nosuch'; choose one of smoke"),
        (["plan", "--profile", "nosuch"], "prismlib plan: error: unknown profile 'nosuch'"),
        (["data", "fetch", "--profile", "nosuch"], "prismlib data: error: unknown profile 'nosuch'"),  # before any download
    ],
)
def test_user_errors_are_one_line_and_debug_shows_the_traceback(argv, message, capsys):
    from prismlib.__main__ import main

    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [err.strip()] and err.startswith(message), err
    with pytest.raises(ValueError):
        main([*argv, "--debug"])


@pytest.mark.slow  # (as in test_reproduce.py, whose tests `make test-fast` leaves out)
def test_a_gpu_profile_is_refused_in_one_line_that_names_the_device_setting(capsys):
    from prismlib.__main__ import main

    for argv in (["train", "--profile", "gpu"], ["reproduce", "--profile", "gpu"], ["data", "fetch", "--profile", "GPU"]):
        assert main(argv) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "unknown profile" in err and "set PRISMLIB_DEVICE=cuda with any profile" in err, err


@pytest.mark.slow  # (as in test_reproduce.py, whose tests `make test-fast` leaves out)
def test_without_its_dependencies_the_command_says_to_use_the_venv(monkeypatch, capsys):
    import importlib.util

    from prismlib.__main__ import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert main(["train"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "has no torch" in err and ".venv/bin/python -m prismlib" in err, err
