"""A headless Chromium for the tests that open pages in a real browser (Debian's chromium and
chromium-driver; the tests skip, saying why, where they or selenium are absent)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def headless_chromium(mp: pytest.MonkeyPatch, args: Sequence[str],
                      capabilities: Mapping[str, Any] | None = None) -> Any:
    """A Chromium started with ``args`` (and ``capabilities``), or a skip naming what is
    missing; ``mp`` makes Selenium Manager (which would download a browser) fail if asked."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(f"no headless browser: {CHROMIUM} and {CHROMEDRIVER} are needed "
                    "(apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common import selenium_manager
    except ImportError:
        pytest.skip('selenium is not installed (pip install -e ".[dev]")')

    def no_download(*a: Any, **kw: Any) -> Any:
        raise AssertionError("Selenium Manager was asked for a browser or driver")

    mp.setattr(selenium_manager.SeleniumManager, "binary_paths", no_download)
    opts = Options()
    opts.binary_location = str(CHROMIUM)
    for arg in args:
        opts.add_argument(arg)
    for key, value in (capabilities or {}).items():
        opts.set_capability(key, value)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
