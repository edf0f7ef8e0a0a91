"""The built documentation site, in a real browser: opened from disk it navigates between pages
and its search answers; served over HTTP the same; its sitemap lists the pages."""

import functools
import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers import chromium

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if not mkdocs:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = {"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    subprocess.run([mkdocs, "build", "--strict", "-q", "-d", str(out)], cwd=ROOT, check=True, env=env)
    return out


@pytest.fixture(scope="module")
def browser():
    driver = chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


def heading(browser) -> str:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.CSS_SELECTOR, "article h1").text.strip(" ¶")


def follow(browser, href: str) -> None:
    """Clicks the first visible link whose href ends with `href` (the navigation's, as a reader would)."""
    from selenium.webdriver.common.by import By

    links = [a for a in browser.find_elements(By.TAG_NAME, "a") if (a.get_attribute("href") or "").endswith(href)]
    visible = [a for a in links if a.is_displayed()]
    assert visible, f"no visible link to {href} on {browser.current_url}"
    browser.execute_script("arguments[0].click();", visible[0])


def search(browser, words: str) -> list[str]:
    """Types into the header's search box as a reader would; the hits' links once they appear."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    box = browser.find_element(By.CSS_SELECTOR, "input[data-md-component=search-query]")
    box.click()
    box.send_keys(words)
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item"))
    return [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, ".md-search-result__link")]


def check_navigation(browser, start: str) -> None:
    browser.get(start + "index.html")
    assert heading(browser) == "hindsight"
    follow(browser, "quickstart.html")
    assert browser.current_url.endswith("/quickstart.html") and heading(browser) == "Quickstart"
    follow(browser, "concepts/boundary.html")  # into a folder
    assert browser.current_url.endswith("/concepts/boundary.html")
    follow(browser, "guide/rl.html")  # from one folder into another
    assert browser.current_url.endswith("/guide/rl.html")
    follow(browser, "index.html")  # and back up
    assert heading(browser) == "hindsight"


def test_the_site_opened_from_disk_navigates_between_pages(site, browser):
    check_navigation(browser, site.as_uri() + "/")


def test_the_site_opened_from_disk_searches(site, browser):
    browser.get((site / "index.html").as_uri())
    hits = search(browser, "boundary")
    assert any("concepts/boundary.html" in hit for hit in hits)


def test_the_served_site_navigates_and_searches(server, browser):
    check_navigation(browser, server)
    assert any("guide/rl.html" in hit for hit in search(browser, "GRPO"))


def test_the_sitemap_lists_every_page(site):
    sitemap = (site / "sitemap.xml").read_text()
    pages = sorted(str(p.relative_to(site)) for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 20
    missing = [page for page in pages if f"/{page}</loc>" not in sitemap]
    assert missing == []
