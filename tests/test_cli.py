"""One installed package, one `hindsight` command, thin stage scripts that need no path tricks."""

import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from hindsight.cli import COMMANDS, main, validate
from hindsight.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted(ROOT.glob("recipes/*.yaml"))


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda path: path.name)
def test_every_shipped_recipe_validates(recipe):
    assert validate([str(recipe)])[0].startswith(f"{recipe}: ok")


@pytest.mark.parametrize(
    "section, bad",
    [
        ("train.lora", "ranke: 16"),
        ("train", "learning_rat: 1.0e-4"),
        ("distill", "candidatez: 4"),
        ("policy", "temprature: 0.0"),
    ],
)
def test_a_bad_key_in_any_section_fails_fast_naming_file_and_key(tmp_path, section, bad):
    recipe = tmp_path / "typo.yaml"
    head, _, sub = section.partition(".")
    body = f"{head}:\n  {sub}:\n    {bad}\n" if sub else f"{head}:\n  {bad}\n"
    recipe.write_text(f"data:\n  source: world\n{body}")
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "hindsight", "validate", str(recipe)], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 2
    assert str(recipe) in result.stderr and bad.split(":")[0] in result.stderr
    assert time.perf_counter() - start < 10  # a second of work; the rest is starting Python
    with pytest.raises(ConfigError, match=re.escape(bad.split(":")[0])):
        validate([str(recipe)])


@pytest.mark.parametrize("section", ["policy", "train"])
def test_a_chat_template_file_that_is_not_there_fails_validation_naming_the_key(tmp_path, section):
    recipe = tmp_path / "template.yaml"
    recipe.write_text(f"data:\n  source: world\n{section}:\n  chat_template: {tmp_path / 'tools.jinja'}\n")
    with pytest.raises(ConfigError, match=f"{re.escape(str(recipe))}: {section}.chat_template: no chat template file"):
        validate([str(recipe)])
    (tmp_path / "tools.jinja").write_text("{{ messages }}")
    assert validate([str(recipe)])[0].startswith(f"{recipe}: ok")


def test_an_unknown_command_lists_the_commands(capsys):
    assert main(["trian"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'trian'" in err and all(name in err for name in COMMANDS)


@pytest.mark.parametrize(
    "script",
    [
        "distill/teacher.py",
        "distill/replay.py",
        "distill/select_demos.py",
        "distill/audit.py",
        "distill/naive.py",
        "train/sft.py",
        "eval/run.py",
        "eval/compare.py",
        "eval/report.py",
    ],
)
def test_stage_scripts_run_from_anywhere(script, tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / script), "--help"], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout


def project_python_files() -> list[Path]:
    """The repository's .py files. The environments and outputs are never entered: .ci/run installs
    vLLM's environment while the tests run, and a walk through it could meet a folder pip removes."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if not name.startswith((".venv", ".git")) and name != "outputs"]
        found += [Path(folder) / name for name in files if name.endswith(".py")]
    return found


def test_no_file_edits_the_import_path():
    edits = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in project_python_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"sys\.path\s*(\[.*\]\s*=|\.(insert|append))", line)
    ]
    assert edits == []


@pytest.mark.slow
def test_the_wheel_holds_only_the_hindsight_package(tmp_path):
    import shutil

    source = tmp_path / "source"  # a copy: setuptools leaves a build/ folder beside the sources
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".venv*", ".git", "outputs", "runs", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"
        ),
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("hindsight-*.whl"))
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"hindsight"}


STAGES = ("distill", "train", "eval", "build", "rl")


def imported_stages(path) -> list[tuple[int, str]]:
    """(line, stage) for each stage package the file imports, however it is written."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] == "hindsight" and len(parts) > 1 and parts[1] in STAGES:
                found.append((node.lineno, parts[1]))
    return found


def test_the_core_imports_no_stage_package():
    found = [
        f"{path.relative_to(ROOT)}:{line} {stage}"
        for path in (ROOT / "hindsight").rglob("*.py")
        if path.relative_to(ROOT / "hindsight").parts[0] not in STAGES
        for line, stage in imported_stages(path)
    ]
    assert found == []


def test_no_stage_imports_another_stage():
    found = [
        f"{path.relative_to(ROOT)}:{line} {stage}"
        for own in STAGES
        for path in (ROOT / "hindsight" / own).rglob("*.py")
        for line, stage in imported_stages(path)
        if stage != own
    ]
    assert found == []
