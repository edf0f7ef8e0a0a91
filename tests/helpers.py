"""Test helpers: small random corpora, JSONL writing, the real shared data."""

import datetime as dt
import importlib.util
import json
import random
import shutil
from pathlib import Path

import pytest

from hindsight.schema import Paper, Task

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ARXIV_CORPUS = SHARED_DATA / "arxiv-cs-2025" / "papers.jsonl.gz"

WORDS = (
    "graph neural network attention transformer diffusion sampling retrieval protein molecule "
    "robot policy reward agent language vision audio speech kernel sparse dense quantum circuit "
    "compiler proof theorem cache memory latency privacy federated causal bandit"
).split()


def random_papers(n: int, seed: int = 0, start=dt.date(2019, 1, 1), days: int = 1500) -> list[Paper]:
    """Papers with random text from a small vocabulary (many ties and shared terms) and ids that
    agree with their dates; several papers share each date."""
    rng = random.Random(seed)
    papers, serial = [], {}
    for _ in range(n):
        date = start + dt.timedelta(days=rng.randrange(days))
        month = f"{date:%y%m}"
        serial[month] = serial.get(month, 0) + 1
        title = " ".join(rng.choices(WORDS, k=rng.randint(2, 6)))
        abstract = " ".join(rng.choices(WORDS, k=rng.randint(0, 30)))
        papers.append(Paper(id=f"{month}.{serial[month]:05d}", title=title, date=date, abstract=abstract))
    return papers


def write_jsonl(path: Path, records) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record if isinstance(record, str) else json.dumps(record))
            handle.write("\n")
    return path


def require_arxiv_corpus() -> Path:
    if not ARXIV_CORPUS.exists():
        pytest.skip(f"real corpus not found at {ARXIV_CORPUS} (it lives in ../shared/data beside the repo)")
    return ARXIV_CORPUS


def write_run(
    runs_dir: Path,
    name: str,
    episodes: list[dict],
    instances_path: Path,
    protocol_hash: str = "proto",
    scorer_version: str = "1",
) -> Path:
    """A run directory as the runner writes it: manifest.json and episodes.jsonl."""
    from hindsight.jsonl import sha256_file

    run_dir = runs_dir / name
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": name,
        "protocol_hash": protocol_hash,
        "scorer_version": scorer_version,
        "instances": {"path": str(instances_path.resolve()), "sha256": sha256_file(instances_path)},
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    write_jsonl(run_dir / "episodes.jsonl", [{**e, "protocol_hash": protocol_hash} for e in episodes])
    return run_dir


def label_id(i: int, j: int) -> str:
    """The id of label j of instance i in `make_instances` (unique up to 60,000 instances)."""
    return f"{2001 + i // 5000}.{(i % 5000) * 20 + j + 1:05d}"


def make_instances(n: int, labels_per: int = 1, flagged_every: int = 0) -> list[dict]:
    """Instances t0..t{n-1}; instance i has labels label_id(i, j) of gain 7 (T3 conceptual)."""
    return [
        {
            "id": f"t{i}",
            "split": "eval",
            "brief": f"brief {i}",
            "cutoff": "2024-01-01",
            "target": {"id": f"2404.{i + 1:05d}", "title": f"Target {i}", "date": "2024-04-01"},
            "labels": [{"id": label_id(i, j), "tier": "T3", "role": "conceptual"} for j in range(labels_per)],
            "audit": {"flagged": bool(flagged_every and i % flagged_every == 0)},
        }
        for i in range(n)
    ]


def episode_for(instance_id: str, returned: list[str], submitted: list[str], status: str = "submitted") -> dict:
    return {
        "instance_id": instance_id,
        "policy": "test",
        "status": status,
        "calls": 2,
        "steps": [{"tool": "search_papers", "args": {"query": "q"}, "returned_ids": returned}],
        "submission": [{"id": pid, "rationale": ""} for pid in submitted],
    }


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_transformers_server(model_dir: Path, timeout_s: float = 120.0, extra_args: tuple[str, ...] = ()):
    """`transformers serve` on 127.0.0.1 with `model_dir` preloaded; returns (process, base_url)."""
    import shutil
    import subprocess
    import sys

    cli = shutil.which("transformers") or str(Path(sys.executable).parent / "transformers")
    if not Path(cli).exists():
        pytest.skip("the `transformers` CLI is not installed (pip install 'transformers[serving]')")
    port = free_port()
    process = subprocess.Popen(
        [cli, "serve", str(model_dir), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu", *extra_args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return process, wait_for_health(process, port, timeout_s, "transformers serve")
    except RuntimeError:
        process.kill()
        raise


def start_vllm_server(
    model_dir: Path, adapters: dict, timeout_s: float = 300.0, max_lora_rank: int = 8, kv_cache_gib: int = 1
):
    """vLLM's OpenAI-compatible server (CPU build) on 127.0.0.1, float32, serving `model_dir` and
    each adapter under its name; returns (process, base_url). Its log goes to a temporary file.
    The server runs its engine in child processes: stop it with `stop_process_group`."""
    import os
    import subprocess
    import sys
    import tempfile

    from hindsight.policy.vllm_backend import cpu_engine_settings

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",
        "--max-model-len",
        "4096",
        # tools with tool_choice "auto" are refused without a parser; hermes reads Qwen's <tool_call>
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
    ]
    if adapters:
        command += [
            "--enable-lora",
            "--max-lora-rank",
            str(max_lora_rank),
            "--lora-modules",
            *(f"{name}={path}" for name, path in adapters.items()),
        ]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib)}
    cpu_engine_settings(env)  # the thread binding the vllm policy uses
    log = tempfile.NamedTemporaryFile("w", prefix="vllm-server-", suffix=".log", delete=False)
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        return process, wait_for_health(process, port, timeout_s, f"the vLLM server (log: {log.name})")
    except RuntimeError:
        stop_process_group(process)
        raise


def wait_for_health(process, port: int, timeout_s: float, name: str) -> str:
    """Poll a local server's /health until it answers; its base URL, or RuntimeError naming it."""
    import time
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with code {process.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{name} did not answer within {timeout_s}s")


def stop_process_group(process) -> None:
    """Kill a process started with start_new_session=True and every child it left."""
    import os
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=60)


def keyed(tasks: list[Task]) -> dict[str, Task]:
    """Synthetic tasks recorded under their own ids (run_episodes takes record id -> task)."""
    return {task.task_id: task for task in tasks}


def write_recipe(root: Path, model: Path, **train) -> Path:
    """A world recipe that distils 8 targets into <root>/distill and trains `model` into <root>/sft."""
    settings = {
        "base_model": str(model),
        "output_dir": str(root / "sft"),
        "learning_rate": 1.0e-2,
        "epochs": 6,
        "per_device_batch_size": 2,
        "gradient_accumulation_steps": 1,
        "max_length": 8192,
        "precision": "fp32",
        "warmup_ratio": 0.0,
        "lr_scheduler": "constant",
        "lora": {
            "rank": 8,
            "alpha": 16,
            "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj"],
        },
        **train,
    }
    recipe = root / "recipe.yaml"
    recipe.write_text(
        json.dumps(
            {
                "data": {"source": "world"},
                "protocol": {"budget": 8, "abstract_words": 10},
                # every flag-free demonstration: these tests need rows to train on, not a strict threshold
                "distill": {"out_dir": str(root / "distill"), "candidates": 1, "max_targets": 8, "keep_quantile": 1.0},
                "train": settings,
            }
        )
    )  # JSON is YAML
    return recipe


def distill(recipe: Path) -> None:
    """The distillation stage of `recipe` as its commands run it: teacher, replay, selection."""
    from hindsight.distill import run_distillation

    run_distillation([str(recipe)])


def distil_and_train(root: Path, model: Path, **train) -> dict:
    """write_recipe's world recipe distilled, then `model` trained on it in this process; the
    training's manifest."""
    from hindsight.recipe import load_recipe
    from hindsight.train.config import TrainConfig
    from hindsight.train.sft import train as train_sft

    recipe_path = write_recipe(root, model, **train)
    distill(recipe_path)
    recipe = load_recipe(recipe_path)
    return train_sft(recipe, TrainConfig.from_recipe(recipe))


# Short results keep every prompt near 1,000 tokens: one LoRA step is ~15 s on 2 cores.
QWEN_PROTOCOL = {"k": 2, "budget": 6, "fields": ["id"], "tool_calls": "lenient"}


def chromium():
    """A headless Debian Chromium under selenium; skips the test where either is missing."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        pytest.skip(
            "no browser: install Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
        )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def load_file_module(name: str, path: Path):
    """A module from a file outside the package (a docs hook, a script, a benchmark)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
