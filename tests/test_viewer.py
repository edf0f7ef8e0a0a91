"""The episode viewer: a static site written from a comparison, read in a real headless browser."""

import json
from pathlib import Path

import pytest

from hindsight.data import load_instances
from hindsight.eval.comparison import compare_runs
from hindsight.eval.viewer import write_viewer
from hindsight.runs import load_run
from tests.helpers import chromium, label_id, make_instances, write_jsonl, write_run

N = 130  # more than one page of 100
HOSTILE_BRIEF = 'We want <script>document.body.dataset.owned = "yes"</script> faster <b>graph</b> attention.'


def episode(i: int, run: str) -> dict | None:
    """Target i's episode in `run`: base finds label 0 of every third target, sft of every second;
    a few end otherwise (malformed, budget exhausted, error) and one is missing."""
    if run == "sft" and i == 7:
        return None
    finds = i % (2 if run == "sft" else 3) == 0
    returned = [label_id(i, 0), "2101.00001"] if finds else ["2101.00001", "2101.00002"]
    results = [{"id": pid, "title": f"Title of {pid}", "date": "2023-05-01"} for pid in returned]
    status = {5: "malformed", 6: "budget_exhausted", 9: "error"}.get(i, "submitted")
    steps = [{"tool": "search_papers", "args": {"query": f"query {i} {run}"}, "returned_ids": returned}]
    if status == "malformed":
        steps.append({"tool": "<malformed>", "args": None, "raw": "I think the answer is", "error": "no tool call"})
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "brief"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "search_papers", "arguments": {"query": f"query {i} {run}"}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": json.dumps({"results": results})},
    ]
    return {
        "instance_id": f"t{i}",
        "policy": run,
        "status": status,
        "calls": len(steps) + 1,
        "steps": steps,
        "error": "the policy crashed" if status == "error" else None,
        "messages": messages,
        "submission": [{"id": pid, "rationale": "close"} for pid in returned] if status == "submitted" else [],
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("viewer")
    records = make_instances(N, labels_per=2)
    records[3]["brief"] = HOSTILE_BRIEF
    instances_path = write_jsonl(root / "instances.jsonl", records)
    for run in ("base", "sft"):
        write_run(root / "runs", run, [e for i in range(N) if (e := episode(i, run))], instances_path)
    runs = [load_run(root / "runs" / name) for name in ("base", "sft")]
    instances = load_instances(instances_path)
    report = compare_runs(runs, instances, n=200, seed=0)
    index = write_viewer(report, runs, instances, root / "site")
    return index, report


def test_every_target_gets_an_index_row_and_a_page_of_its_own(site):
    index, report = site
    data = index.parent / "data"
    rows = json.loads((data / "index.js").read_text().split(" = ", 1)[1].rstrip(";\n"))["rows"]
    assert [row["id"] for row in rows] == [f"t{i}" for i in range(N)]
    assert sorted(p.name for p in (data / "targets").iterdir()) == sorted(f"{i}.js" for i in range(N))
    wins = sum(row["outcome"] == "win" for row in rows)
    assert wins == sum(
        s["ndcg10"] > b["ndcg10"] for b, s in zip(report["per_target"]["base"], report["per_target"]["sft"])
    )
    page = json.loads((data / "targets" / "7.js").read_text().split(" = ", 1)[1].rstrip(";\n"))
    assert page["runs"]["sft"]["status"] == "missing" and page["runs"]["sft"]["steps"] == []
    assert page["evaluator"]["target"]["id"] == "2404.00008"  # evaluator-only fields sit under "evaluator"


# ---- in a real browser --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    driver = chromium()
    yield driver
    driver.quit()


def wait_ready(browser, what: str):
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 10).until(lambda d: d.execute_script("return document.body.dataset.ready") == what)


def open_index(browser, index: Path):
    browser.get(index.as_uri())
    wait_ready(browser, "index")


def rows(browser) -> list[list[str]]:
    """The index table's cells as the page renders them, read in one call (a WebDriver call a cell
    made this module's tests half a minute slower)."""
    return browser.execute_script(
        "return [...document.querySelectorAll('#targets tbody tr')]"
        ".map(row => [...row.querySelectorAll('td')].map(cell => cell.innerText.trim()))"
    )


def column(browser, label: str) -> int:
    from selenium.webdriver.common.by import By

    return [th.text.strip(" ▲▼") for th in browser.find_elements(By.CSS_SELECTOR, "#targets th")].index(label)


def test_the_index_lists_every_target_across_its_pages(site, browser):
    from selenium.webdriver.common.by import By

    index, _ = site
    open_index(browser, index)
    seen = []
    while True:
        seen += [row[1] for row in rows(browser)]
        following = browser.find_element(By.ID, "next")
        if not following.is_enabled():
            break
        following.click()
    assert seen == [f"t{i}" for i in range(N)]
    assert browser.find_element(By.ID, "count").text.startswith(f"{N} of {N} targets")


def test_sorting_by_a_column_orders_the_rows(site, browser):
    from selenium.webdriver.common.by import By

    index, report = site
    open_index(browser, index)
    sft = column(browser, "sft nDCG@10")
    header = browser.find_elements(By.CSS_SELECTOR, "#targets th")[sft]
    header.click()  # numbers sort high to low first
    values = [float(row[sft]) for row in rows(browser)]
    best = sorted((s["ndcg10"] for s in report["per_target"]["sft"]), reverse=True)[: len(values)]
    assert values == pytest.approx(best, abs=1e-3)
    header.click()
    values = [float(row[sft]) for row in rows(browser)]
    assert values == sorted(values) and values[0] == 0.0


def test_filters_keep_only_the_matching_targets(site, browser):
    from selenium.webdriver.support.ui import Select

    index, report = site
    open_index(browser, index)
    pairs = list(zip(report["per_target"]["base"], report["per_target"]["sft"]))
    Select(browser.find_element("id", "filter")).select_by_value("win")
    shown, versus = rows(browser), column(browser, "sft - base")
    assert {row[versus] for row in shown} == {"win"}
    assert len(shown) == min(100, sum(s["ndcg10"] > b["ndcg10"] for b, s in pairs))
    Select(browser.find_element("id", "filter")).select_by_value("status:sft:missing")
    assert [row[1] for row in rows(browser)] == ["t7"]


def test_a_target_page_shows_the_steps_and_marks_a_known_antecedent(site, browser):
    from selenium.webdriver.common.by import By

    index, _ = site
    browser.get(index.with_name("target.html").as_uri() + "#6")  # sft found label 0 of t6; base did too (6 % 3 == 0)
    wait_ready(browser, "target")
    sft = browser.find_element(By.CSS_SELECTOR, '.run[data-run="sft"]')
    step = sft.find_element(By.CSS_SELECTOR, '.step[data-step="1"]')
    assert "query 6 sft" in step.text
    marked = step.find_element(By.CSS_SELECTOR, f'li.antecedent[data-id="{label_id(6, 0)}"]')
    assert "T3" in marked.text and f"Title of {label_id(6, 0)}" in marked.text
    assert len(step.find_elements(By.CSS_SELECTOR, "li.antecedent")) == 1  # the other result is no antecedent
    evaluator = browser.find_element(By.CSS_SELECTOR, ".evaluator")
    assert "evaluator only" in evaluator.text and "2404.00007" in evaluator.text
    first = evaluator.find_element(By.CSS_SELECTOR, f'tr[data-id="{label_id(6, 0)}"]')
    assert first.text.endswith("step 1 step 1")
    assert "budget_exhausted" in sft.text


def test_every_ending_renders_and_markup_in_a_brief_stays_text(site, browser):
    from selenium.webdriver.common.by import By

    index, _ = site
    target = index.with_name("target.html").as_uri()
    browser.get(target + "#5")
    wait_ready(browser, "target")
    assert "I think the answer is" in browser.find_element(By.CSS_SELECTOR, '.run[data-run="base"]').text
    browser.get(target + "#7")
    wait_ready(browser, "target")
    assert "no episode recorded" in browser.find_element(By.CSS_SELECTOR, '.run[data-run="sft"]').text
    browser.get(target + "#9")
    wait_ready(browser, "target")
    assert "the policy crashed" in browser.find_element(By.CSS_SELECTOR, '.run[data-run="base"]').text
    browser.get(target + "#3")
    wait_ready(browser, "target")
    assert HOSTILE_BRIEF in browser.find_element(By.CSS_SELECTOR, ".brief").text
    assert browser.execute_script("return document.body.dataset.owned") is None


def test_the_pages_log_no_errors(site, browser):
    index, _ = site
    browser.get_log("browser")  # drop what earlier tests left
    open_index(browser, index)
    browser.get(index.with_name("target.html").as_uri() + "#0")
    wait_ready(browser, "target")
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def test_one_run_gets_an_index_without_a_comparison_column(tmp_path, site, browser):
    from hindsight.eval.report import main as report_main

    runs_dir = site[0].parent.parent / "runs"
    assert report_main(["sft", "--runs-dir", str(runs_dir), "--html", str(tmp_path / "one")]) == 0
    open_index(browser, tmp_path / "one" / "index.html")
    headers = [th.text.strip(" ▲▼") for th in browser.find_elements("css selector", "#targets th")]
    assert "sft nDCG@10" in headers and not any(h.startswith("base") or " - " in h for h in headers)
    assert browser.find_element("id", "count").text.startswith(f"{N} of {N} targets")
