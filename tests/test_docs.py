"""The documentation: its generated references cover every config field, and every shell command
the README and the quickstart show is either run (here, in a sandbox, or by .ci/run) or excused
with a reason. The site itself is built with warnings as errors, as `make docs` builds it, by
tests/test_docs_site.py."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import load_file_module

ROOT = Path(__file__).resolve().parents[1]


reference = load_file_module("docs_reference", ROOT / "docs" / "hooks" / "reference.py")

# Commands shown to users and what runs them. A command added to the README or the quickstart
# without an entry here fails test_every_shown_command_is_run_or_excused.
RUN_HERE = {
    "hindsight validate recipes/*.yaml",
    "python eval/gate.py --help",
}
RUN_BY_CI = {  # .ci/run runs these on every submission
    "make lint": "make lint",
    "make test": "make test",
    "make demo": "make demo",
    "make test-vllm": "make test-vllm",
}
# The quickstart's pipeline by hand, run in a copy of the repository by
# test_the_quickstart_pipeline_runs_as_shown (eval/run.py on 8 targets of the split).
RUN_IN_SANDBOX = [
    "python -m hindsight.models.tiny --out outputs/tiny-qwen",
    "python distill/teacher.py recipes/tiny.yaml",
    "python distill/replay.py recipes/tiny.yaml",
    "python distill/select_demos.py recipes/tiny.yaml",
    "accelerate launch --cpu --num_processes 1 train/sft.py recipes/tiny.yaml",
    "python eval/run.py recipes/tiny.yaml --name base",
    "python eval/run.py recipes/tiny.yaml --name sft --student outputs/tiny/sft",
    "python eval/compare.py base sft --runs-dir outputs/tiny/runs --plots outputs/tiny/plots",
]
NOT_RUN = {
    "git clone <this repository> && cd hindsight": "needs the network",
    "make venv": "every make target above creates it",
    'make venv TORCH_SPEC="torch==2.13.0 --index-url <your CUDA wheel index>"': "a GPU wheel index",
    'make venv TORCH_SPEC=""': "the same install as make venv, without torch",
    "make test-quick": "a subset of make test",
    "make venv-vllm": "make test-vllm creates it",
    "bash scripts/experiment.sh recipes/qwen05_world.yaml": "an hour or more of CPU with the real Qwen",
    "bash scripts/demo_seeds.sh 0 1 2": "three demos, 40 minutes",
    "bash scripts/base_seeds.sh": "ten base stages, about an hour",
    "THREADS=1 bash scripts/demo.sh": "the demo again under one thread",
    "SEED=1 bash scripts/demo.sh": "the demo again under another seed",
    "bash scripts/demo.sh train eval compare check": "stages of make demo, run again",
    "python scripts/check_demo.py outputs/demo/runs/comparison.json": "the last stage of make demo",
}
SHOWN_IN = [ROOT / "README.md", ROOT / "docs" / "quickstart.md"]


def shown_commands(path: Path) -> list[str]:
    """The commands of the ```bash blocks of `path`: comments dropped, continuation lines joined."""
    commands, block = [], None
    for line in path.read_text().splitlines():
        if block is None:
            block = [] if line.strip() in ("```bash", "```sh") else None
            continue
        if line.strip() == "```":
            text = "\n".join(block).replace("\\\n", " ")
            for command in text.splitlines():
                command = re.sub(r"\s+#.*$", "", command).strip()
                if command and not command.startswith("#"):
                    commands.append(" ".join(command.split()))
            block = None
        else:
            block.append(line)
    return commands


def test_every_shown_command_is_run_or_excused():
    for path in SHOWN_IN:
        for command in shown_commands(path):
            assert command in RUN_HERE or command in RUN_BY_CI or command in RUN_IN_SANDBOX or command in NOT_RUN, (
                f"{path.name}: `{command}` is neither run by a test nor excused (tests/test_docs.py)"
            )


def test_the_commands_ci_is_said_to_run_are_in_ci_run():
    ci = (ROOT / ".ci" / "run").read_text()
    for command in RUN_BY_CI.values():
        assert re.search(rf"^\s*{re.escape(command)}\b", ci, re.M), f".ci/run does not run `{command}`"


@pytest.mark.parametrize("command", sorted(RUN_HERE))
def test_the_commands_run_here_succeed(command):
    # verbatim through the shell, with this environment's python and hindsight first on the PATH
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr


def test_the_shown_commands_are_found():
    # the parser itself: a README with no commands would pass the check above vacuously
    assert "make demo" in shown_commands(ROOT / "README.md")
    assert "make test" in shown_commands(ROOT / "README.md")


@pytest.mark.parametrize("section, dotted, _purpose", reference.SECTIONS)
def test_every_config_field_has_a_meaning(section, dotted, _purpose):
    missing = [name for name, meaning in reference.field_meanings(reference.load(dotted)).items() if not meaning]
    assert not missing, f"{dotted}: fields without a one-line comment: {', '.join(missing)}"


def test_a_field_without_a_comment_is_caught():
    from dataclasses import dataclass

    @dataclass
    class Example:
        described: int = 1  # what it is
        bare: int = 2

    assert reference.field_meanings(Example) == {"described": "what it is", "bare": ""}


def test_the_committed_recipe_reference_is_what_the_code_generates():
    assert (ROOT / "docs/reference/recipe.md").read_text() == reference.recipe_reference(), (
        "docs/reference/recipe.md is stale: run python docs/hooks/reference.py"
    )


def test_the_recipe_reference_lists_every_section_and_key():
    page = reference.recipe_reference()
    for section, dotted, _ in reference.SECTIONS:
        assert f"## `{section}`" in page
        for name in reference.field_meanings(reference.load(dotted)):
            assert f"| `{name}` |" in page


@pytest.mark.slow
def test_the_quickstart_pipeline_runs_as_shown(tmp_path):
    """Each command of the quickstart's pipeline, verbatim but for eval/run.py's 8 targets, in a
    copy of the stage files and recipes (the package itself is the installed one)."""
    assert all(command in shown_commands(ROOT / "docs" / "quickstart.md") for command in RUN_IN_SANDBOX)
    for folder in ("distill", "train", "eval", "recipes"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    for command in RUN_IN_SANDBOX:
        words = command.split()
        words[0] = sys.executable if words[0] == "python" else str(bin_dir / words[0])
        if "eval/run.py" in command:
            words += ["--set", "data.max_targets=8"]
        done = subprocess.run(words, cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"
    assert (tmp_path / "outputs/tiny/sft/train_manifest.json").exists()
    assert list((tmp_path / "outputs/tiny/plots").glob("*.png"))


def test_every_file_the_readme_links_to_exists():
    # the site checks its own links (make docs, strict); the README is read on a code host
    links = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", (ROOT / "README.md").read_text())
    assert links, "no relative links found"
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing


results = load_file_module("docs_results", ROOT / "docs" / "hooks" / "results.py")


def test_every_result_table_is_what_its_committed_files_give():
    assert results.pages(), "no page has a generated results table"
    assert results.stale_pages() == []


def _comparison(path: Path, sft_final: float) -> None:
    summary = {"exposed_gain": 0.1, "selected_gain": 0.05, "ndcg10": 0.02}
    difference = {key: {"diff": 0.01, "low": -0.01, "high": 0.03} for key in summary}
    difference["ndcg10"] = {"diff": sft_final - 0.02, "low": 0.001, "high": 0.05}
    report = {
        "runs": {"base": {"summary": summary}, "sft": {"summary": {**summary, "ndcg10": sft_final}}},
        "differences": {"sft - base": difference},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report))


def test_a_page_whose_numbers_no_longer_match_its_file_is_stale(tmp_path):
    _comparison(tmp_path / "r/comparison.json", 0.040)
    page = tmp_path / "README.md"
    page.write_text("# t\n<!-- results: funnel\nseed 0 = r/comparison.json\n-->\n<!-- /results -->\n")
    page.write_text(results.render(page.read_text(), tmp_path))
    assert "0.020 → 0.040, +0.020 [+0.001, +0.050]" in page.read_text()
    assert "+0.010 [−0.010, +0.030]" in page.read_text()  # a typographic minus
    assert results.stale_pages(tmp_path) == []
    _comparison(tmp_path / "r/comparison.json", 0.050)  # a new run, the page not regenerated
    assert results.stale_pages(tmp_path) == ["README.md"]


@pytest.mark.parametrize(
    "spec, named",
    [
        ("seed 0 = missing.json", "missing.json: no such result file"),
        ("seed 0 r/comparison.json", "is not 'label = path"),
        ("seed 0 = r/comparison.json#rl - sft", "name one of its differences"),
    ],
)
def test_a_bad_results_block_names_what_is_wrong(tmp_path, spec, named):
    _comparison(tmp_path / "r/comparison.json", 0.04)
    with pytest.raises(results.ResultsError, match=re.escape(named)):
        results.render(f"<!-- results: funnel\n{spec}\n-->\n<!-- /results -->\n", tmp_path, "page.md")


# Tables of settings, not results: they hold numbers but no measurement.
SETTINGS_TABLES = {
    ("docs/experiments/real-qwen.md", "| | this experiment | the paper (Inspire, B.4) |"),
    ("docs/guide/training.md", "| launcher | recipe | processes | what was checked |"),
}


def hand_typed_number_tables(path: Path) -> list[str]:
    """Header lines of the tables in `path` that hold decimals or percentages outside a generated
    results block."""
    lines, found, inside = path.read_text().splitlines(), [], False
    for i, line in enumerate(lines):
        if line.startswith("<!-- results:"):
            inside = True
        elif line.startswith("<!-- /results"):
            inside = False
        elif not inside and line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            body = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                body.append(row)
            # a measured number stands alone: 0.068, +0.014, 45%; not Qwen2.5 or 0.5B
            if any(re.search(r"(?<![\w.])[+−-]?\d+\.\d+(?![\w.])|\d%", row) for row in body):
                found.append(line)
    return found


def test_no_current_page_holds_a_hand_typed_result_table():
    # every page's numbers come from docs/hooks/results.py, the lessons pages' too (a run whose
    # files were not kept is told in words, its notebook left to git)
    pages = [ROOT / "README.md"] + [
        page for page in sorted((ROOT / "docs").rglob("*.md")) if "reference" not in page.parts
    ]
    typed = [
        (str(page.relative_to(ROOT)), header)
        for page in pages
        for header in hand_typed_number_tables(page)
        if (str(page.relative_to(ROOT)), header) not in SETTINGS_TABLES
    ]
    assert typed == []


def test_a_hand_typed_result_table_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("| run | final |\n|---|---:|\n| sft | 0.068 |\n")
    assert hand_typed_number_tables(page) == ["| run | final |"]
    page.write_text(
        "<!-- results: funnel\nx = y\n-->\n| run | final |\n|---|---:|\n| sft | 0.068 |\n<!-- /results -->\n"
    )
    assert hand_typed_number_tables(page) == []
