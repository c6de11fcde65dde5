"""Tests read the repository's tracked files only (tests/_tracked.py): an untracked file, an
ignored one or a dangling link in the work tree neither breaks nor influences them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ._tracked import ROOT, read_text, repository_files, repository_paths


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    """A git repository with tracked files, and then untracked, ignored and linked ones."""
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "a.md").write_text("tracked\n")
    (repo / "docs" / "deep").mkdir()
    (repo / "docs" / "deep" / "b.md").write_text("tracked too\n")
    (repo / ".gitignore").write_text("ignored.md\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "files")
    (repo / "docs" / "untracked.md").write_text("untracked\n")
    (repo / "ignored.md").write_text("ignored\n")
    os.symlink("/nonexistent/path/of/this/machine", repo / ".venv-main")
    return repo


def test_only_tracked_files_are_listed(checkout: Path) -> None:
    assert repository_files(checkout) == [".gitignore", "docs/a.md", "docs/deep/b.md"]
    assert repository_files(checkout, "docs") == ["docs/a.md", "docs/deep/b.md"]
    assert repository_paths("docs", "*.md", checkout) == [checkout / "docs" / "a.md"]


def test_outside_a_git_checkout_every_file_but_tool_folders(tmp_path: Path) -> None:
    tree = tmp_path / "unpacked"
    (tree / "docs").mkdir(parents=True)
    (tree / "docs" / "a.md").write_text("x\n")
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "m.pyc").write_bytes(b"\0")
    (tree / ".venv" / "bin").mkdir(parents=True)
    (tree / ".venv" / "bin" / "python").write_text("")
    env_dir = tree / "sub"
    env_dir.mkdir()
    (env_dir / "b.txt").write_text("y\n")
    assert repository_files(tree) == ["docs/a.md", "sub/b.txt"]


def test_a_tracked_link_is_read_as_the_path_it_names(checkout: Path) -> None:
    os.symlink("docs/a.md", checkout / "link")
    _git(checkout, "add", "link")
    assert "link" in repository_files(checkout)
    assert read_text(checkout, "link") == "docs/a.md"
    assert read_text(checkout, "docs/gone.md") is None


def test_the_repository_tracks_no_link() -> None:
    """A committed link (``.venv-main`` once) names a path of one machine."""
    links = [n for n in repository_files(ROOT) if (ROOT / n).is_symlink()]
    assert not links, links
