r"""Untrusted text made safe to print on a terminal: :func:`terminal_text`, the one function.

A report read back (``show --from``, ``errata --from``, ``verify --resume``) is hostile input,
and so is every string in it: a check's ``detail``, a counterexample, an id, a stored command.
A terminal obeys the control characters in what it prints: ``ESC ] 52`` (OSC 52) writes the
clipboard, ``ESC ] 0`` sets the window title, ``ESC [ 1 A`` moves the cursor up to rewrite the
line above, a right-to-left override (U+202E) shows ``exe.txt`` as ``txt.exe``. Every string
from a report passes through :func:`terminal_text` before it reaches ``stdout`` or ``stderr``.

What is removed: the C0 controls except ``\n`` and ``\t`` (``\r`` too: it rewrites the line),
DEL, the C1 controls (U+0080 to U+009F, among them the one-character CSI and OSC), whole escape
sequences (CSI ``ESC [ ... final``, OSC / DCS / APC / PM / SOS strings up to their terminator,
and two-character ``ESC x``), and the bidirectional formatting characters (U+202A-U+202E,
U+2066-U+2069, U+200E, U+200F, U+061C). Ordinary Unicode text (Greek letters, ``≤``) is kept.

>>> terminal_text("ok\x1b]52;c;ZXZpbA==\x07 done")
'ok done'
>>> terminal_text("a\x1b[1A\x1b[2Kb\tc\nd\r")
'ab\tc\nd'
>>> terminal_text("η ≤ 1 \u202egnp.exe")
'η ≤ 1 gnp.exe'
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["terminal_text"]

# Escape sequences first (so their parameters go with them), then lone control characters.
_SEQUENCES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"                     # CSI ... final byte
    r"|\x1b[\]PX^_].*?(?:\x07|\x1b\\|\x9c|$)"      # OSC, DCS, SOS, PM, APC ... terminator
    r"|[\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x1b\\|\x9c|$)"  # their one-character C1 forms
    r"|\x9b[0-?]*[ -/]*[@-~]"                      # one-character CSI
    r"|\x1b[ -/]*[0-~]?",                          # ESC x (and a lone ESC)
    re.DOTALL,
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                       "\u2066-\u2069]")


def terminal_text(text: Any) -> str:
    r"""``str(text)`` without terminal control: escape sequences, C0 controls but ``\n`` and
    ``\t``, DEL, C1 controls and bidirectional overrides removed (see the module docstring).

    >>> terminal_text("\x1b]0;pwned\x07title") , terminal_text(None)
    ('title', 'None')
    """
    return _CONTROLS.sub("", _SEQUENCES.sub("", str(text)))
