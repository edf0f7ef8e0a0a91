"""The site's generated pages: the recipe reference from the typed configs and the CLI reference
from the parsers. They are committed (so that they read on a code host too) and checked at
every build: `make docs` fails when either differs from what the code generates now.

    python docs/hooks/reference.py     # regenerate docs/reference/recipe.md and cli.md

mkdocs runs `on_pre_build` (mkdocs.yml, `hooks:`); tests/test_docs.py imports the same functions.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import re
import subprocess
import sys
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (section, config class, what the section is for), in the order a recipe is read.
SECTIONS = [
    ("data", "hindsight.recipe:DataConfig", "where the instances and the corpus come from"),
    ("search", "hindsight.recipe:SearchConfig", "the search backend every stage uses"),
    (
        "protocol",
        "hindsight.protocol:ProtocolConfig",
        "the evaluation protocol: its hash is what makes runs comparable",
    ),
    ("policy", "hindsight.recipe:PolicyConfig", "the agent `eval/run.py` evaluates"),
    ("distill", "hindsight.distill.config:DistillConfig", "the teacher, the replay and the selection (`distill/`)"),
    ("train", "hindsight.train.config:TrainConfig", "the student's fine-tuning (`train/sft.py`)"),
    ("train.lora", "hindsight.config:LoraSettings", "the LoRA adapter; `lora: null` is full fine-tuning"),
    (
        "gate",
        "hindsight.eval.gate:GateConfig",
        "the capability gate a student passes before it is compared (`eval/gate.py`)",
    ),
    (
        "rl",
        "hindsight.rl.config:RLConfig",
        "reinforcement learning (GRPO) of a student on the environment (`train/rl.py`)",
    ),
]

_CONTINUATION = re.compile(r"^\s+#\s?(.*)$")


def load(dotted: str) -> type:
    module, name = dotted.split(":")
    return getattr(importlib.import_module(module), name)


def field_meanings(cls: type) -> dict[str, str]:
    """Each field's one-line meaning: the comment on its statement's lines in the source (on the
    field's line, or inside the parentheses the formatter wraps a long one in), with the
    comment-only lines right below it. A field without one maps to ''."""
    import ast
    import io
    import textwrap
    import tokenize

    source = textwrap.dedent(inspect.getsource(cls))
    lines = source.splitlines()
    comments = {
        token.start[0]: token.string.lstrip("#").strip()
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }
    names = {f.name for f in dataclasses.fields(cls)}
    meanings: dict[str, str] = {}
    (body,) = ast.parse(source).body
    for node in body.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        name = node.target.id
        if name not in names or name in meanings:
            continue
        found = [comments[n] for n in range(node.lineno, node.end_lineno + 1) if n in comments]
        meaning = found[0] if found else ""
        below = node.end_lineno + 1
        while meaning and below <= len(lines) and _CONTINUATION.match(lines[below - 1]):
            meaning += " " + _CONTINUATION.match(lines[below - 1]).group(1).strip()
            below += 1
        meanings[name] = meaning
    return {name: meanings.get(name, "") for name in (f.name for f in dataclasses.fields(cls))}


def _type_name(annotation) -> str:
    text = str(annotation) if not isinstance(annotation, type) else annotation.__name__
    return text.replace("typing.", "").replace("NoneType", "None")


def _default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "(required)"
    if isinstance(value, tuple):
        value = list(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return repr(value) if isinstance(value, str) else repr(value).replace("'", "")


def recipe_reference() -> str:
    out = [
        "# Recipe reference",
        "",
        "Generated from the typed configs at build time (`docs/hooks/reference.py`): every section and key a",
        "recipe may hold, its type, its default and its meaning, as the code states them. Unknown sections",
        "and keys are errors that name the file and key; `--set section.key=value` overrides any value on",
        "a command line; `hindsight validate RECIPE` reads every section without running anything.",
        "",
        "`runs_dir` (top level, default `runs`): where `eval/run.py` writes `runs/<name>/`.",
        "",
    ]
    for section, dotted, purpose in SECTIONS:
        cls = load(dotted)
        hints = typing.get_type_hints(cls)
        meanings = field_meanings(cls)
        out += [
            f"## `{section}`",
            "",
            f"{purpose[0].upper()}{purpose[1:]} (`{dotted.replace(':', '.')}`).",
            "",
            "| key | type | default | meaning |",
            "|---|---|---|---|",
        ]
        for field in dataclasses.fields(cls):
            meaning = meanings[field.name].replace("|", "\\|")
            kind = _type_name(hints[field.name]).replace(" | ", " or ")  # a pipe would end the table cell
            out.append(f"| `{field.name}` | `{kind}` | `{_default(field)}` | {meaning} |")
        out.append("")
    return "\n".join(out)


def cli_reference() -> str:
    from hindsight.cli import COMMANDS

    out = [
        "# Command-line reference",
        "",
        "Generated at build time from each command's own `--help` (`docs/hooks/reference.py`).",
        "`hindsight COMMAND ...` and the files under `distill/`, `train/` and `eval/` run the same functions.",
        "",
    ]
    for name, (module, summary) in COMMANDS.items():
        # a fixed width: argparse wraps to the terminal's, and the page must not depend on it
        done = subprocess.run(
            [sys.executable, "-m", "hindsight", name, "--help"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            env={**os.environ, "COLUMNS": "100"},
        )
        text = done.stdout.strip() or done.stderr.strip()
        out += [
            f"## `hindsight {name}`",
            "",
            f"{summary[0].upper()}{summary[1:]} (`{module}`).",
            "",
            "```text",
            text,
            "```",
            "",
        ]
    return "\n".join(out)


PAGES = {"reference/recipe.md": recipe_reference, "reference/cli.md": cli_reference}


def on_pre_build(config):
    """mkdocs hook: refuse to build from a stale generated page."""
    from mkdocs.exceptions import PluginError

    for page, make in PAGES.items():
        path = ROOT / "docs" / page
        if not path.exists() or path.read_text() != make():
            raise PluginError(f"docs/{page} differs from what the code generates: run python docs/hooks/reference.py")


if __name__ == "__main__":
    for page, make in PAGES.items():
        (ROOT / "docs" / page).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / "docs" / page).write_text(make())
        print(f"wrote docs/{page}")
