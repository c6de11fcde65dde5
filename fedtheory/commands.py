"""The commands fedtheory prints, built so that they run when pasted.

Every command line the tool prints (the ``--resume`` line of an interrupted run, the replay
command of a refuted check, the next commands after a run, ``show``'s and ``errata``'s advice)
is made here by one function, :func:`command`, from parts it checks (a claim id, a check name,
a preset, a seed, a path): never by pasting a string read from a report. Each word is quoted
with :func:`shlex.quote`, and the command starts with the program as the user invoked it
(:func:`program`), so that it runs from a shell where the virtualenv is not activated.

Reports keep the canonical form, ``fedtheory ...`` (:data:`RECORD`): a report is the same on
every machine, and whoever reads it runs its commands with their own ``fedtheory``.

This is a foundation module: it imports the standard library only.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from fedtheory import vocabulary

__all__ = [
    "PRESETS",
    "RECORD",
    "command",
    "program",
    "replay",
    "replay_python",
    "resume",
]

#: The program a report's commands start with (the same on every machine).
RECORD: tuple[str, ...] = ("fedtheory",)

#: The size presets a printed command may name.
PRESETS = vocabulary.PRESETS

#: Characters no printed word may hold (C0 and C1 controls, DEL): a terminal would obey them.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def program(argv0: str | None = None) -> tuple[str, ...]:
    """The program as the user invoked it: ``fedtheory`` when the script that runs is the
    ``fedtheory`` that ``PATH`` finds, else that script's absolute path, else (``python -m
    fedtheory``, or ``main()`` called from Python) the interpreter's absolute path with
    ``-m fedtheory``. ``argv0`` defaults to ``sys.argv[0]``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    script = Path(argv0) if argv0 else None
    if script is not None and script.stem == "fedtheory" and script.suffix in ("", ".exe"):
        try:
            if script.is_file():
                found = shutil.which("fedtheory")
                if found is not None and os.path.samefile(found, script):
                    return ("fedtheory",)
                return (str(script.resolve()),)
        except OSError:
            pass
    return (str(Path(sys.executable).absolute()), "-m", "fedtheory")


def _word(value: object, what: str) -> str:
    """``value`` as one word of a command, or ``ValueError`` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, (str, int, os.PathLike)):
        raise ValueError(f"{what}: {value!r} is not a command-line word")
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if text == "" or _CONTROL.search(text):
        raise ValueError(f"{what}: {text!r} is empty or holds control characters")
    return text


def _name(value: object, what: str) -> str:
    """A claim id or check name: a word (:func:`_word`) that is not an option."""
    if not isinstance(value, str) or value.startswith("-"):
        raise ValueError(f"{what}: {value!r} is not a claim id or check name")
    return _word(value, what)


def _preset(value: object) -> str:
    if value not in PRESETS:
        raise ValueError(f"preset: {value!r} is not one of {', '.join(PRESETS)}")
    return str(value)


def _seed(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"seed: {value!r} is not a non-negative integer")
    return value


def command(subcommand: str, *words: object, prog: Sequence[str] | None = None) -> str:
    """The shell command ``PROGRAM SUBCOMMAND WORDS...``, each word checked (a string, path or
    integer; not empty; no control characters) and quoted with :func:`shlex.quote`.
    ``prog`` is the program's words (default: :func:`program`; :data:`RECORD` for reports).

    >>> command("show", "ocs.closed_form", "--from", "my report.json", prog=RECORD)
    "fedtheory show ocs.closed_form --from 'my report.json'"
    """
    head = tuple(program() if prog is None else prog)
    parts = [*head, _name(subcommand, "subcommand"),
             *(_word(w, "argument") for w in words)]
    return shlex.join(parts)


def replay(claim_id: str, check: str, preset: str, seed: int, claims: str | None = None,
           prog: Sequence[str] | None = None) -> str:
    """The command that re-runs exactly the check ``check`` of ``claim_id`` (``--claims FILE``
    first loads the file that defines a claim from outside the package).

    >>> replay("ocs.closed_form", "kkt", "quick", 0, prog=RECORD)
    'fedtheory replay ocs.closed_form --check kkt --preset quick --seed 0'
    >>> replay("mine.wrong", "exact", "full", 3, "/my lemmas/w.py", prog=RECORD)
    "fedtheory replay mine.wrong --check exact --preset full --seed 3 --claims '/my lemmas/w.py'"
    """
    words: list[object] = [_name(claim_id, "claim id"), "--check", _name(check, "check name"),
                           "--preset", _preset(preset), "--seed", _seed(seed)]
    if claims is not None:
        words += ["--claims", _word(claims, "--claims")]
    return command("replay", *words, prog=prog)


def replay_python(claim_id: str, check: str, preset: str, seed: int,
                  claims: str | None = None) -> str:
    """The Python statement that does what :func:`replay` does (``import fedtheory`` first).

    >>> replay_python("ocs.closed_form", "kkt", "quick", 0)
    "fedtheory.get_claim('ocs.closed_form').verify(preset='quick', seed=0, only=['kkt'])"
    """
    claim_id, check = _name(claim_id, "claim id"), _name(check, "check name")
    call = (f"fedtheory.get_claim({claim_id!r}).verify(preset={_preset(preset)!r}, "
            f"seed={_seed(seed)}, only=[{check!r}])")
    if claims is None:
        return call
    return f"fedtheory.claims.registry.add_sources([{_word(claims, '--claims')!r}]); {call}"


def resume(report: str | os.PathLike[str], preset: str, seed: int,
           claims: Sequence[str] = (), targets: Sequence[str] = (),
           options: Sequence[object] = (), prog: Sequence[str] | None = None) -> str:
    """The ``verify`` command that continues the run whose report is ``report``: its
    ``targets`` (claim ids and claim files), ``--claims`` for each of ``claims``, the preset and
    the seed, further ``options`` (words), then ``--resume REPORT``.

    >>> resume(".fedtheory/last_run.json", "quick", 0, prog=RECORD)
    'fedtheory verify --preset quick --seed 0 --resume .fedtheory/last_run.json'
    """
    words: list[object] = [_word(t, "claim id or path") for t in targets]
    for path in claims:
        words += ["--claims", _word(path, "--claims")]
    words += ["--preset", _preset(preset), "--seed", _seed(seed), *options,
              "--resume", _word(report, "--resume")]
    return command("verify", *words, prog=prog)
