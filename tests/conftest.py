import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hindsight.corpus import Corpus
from tests.helpers import QWEN_PROTOCOL, distill, random_papers

# Tests never reach a model hub: a load that would download fails instead of hanging.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # whoever imports litellm first


# .ci/run gives both of its test environments one folder (HINDSIGHT_TEST_SHARED), so that the real
# Qwen is dequantised once and its test adapter trained once per CI run; elsewhere each session
# makes its own.
SHARED = os.environ.get("HINDSIGHT_TEST_SHARED")


def _link_shared_models(cache: Path) -> None:
    shared = Path(SHARED) / "gguf"
    shared.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    if not (cache / "gguf").exists():
        (cache / "gguf").symlink_to(shared, target_is_directory=True)


@pytest.fixture(scope="session", autouse=True)
def _isolated_session_cache(tmp_path_factory):
    """The same for session-scoped fixtures, which are set up before any test's own fixtures."""
    cache = tmp_path_factory.getbasetemp() / "hindsight-cache"
    if SHARED:
        _link_shared_models(cache)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HINDSIGHT_CACHE", str(cache))
        yield


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Indexes built by a test go to a temporary cache, never to the user's home."""
    monkeypatch.setenv("HINDSIGHT_CACHE", str(tmp_path_factory.getbasetemp() / "hindsight-cache"))


@pytest.fixture
def small_corpus() -> Corpus:
    return Corpus(random_papers(300, seed=1))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A random-weight Qwen3 with a tokenizer trained on test text, saved in a temp dir."""
    pytest.importorskip("transformers")
    from hindsight.models.tiny import build_tiny_qwen

    texts = [f"{p.title} {p.abstract}" for p in random_papers(300, seed=9)]
    return build_tiny_qwen(tmp_path_factory.mktemp("tiny-qwen"), texts)


@pytest.fixture(scope="session")
def tiny_server(tiny_model):
    """`transformers serve` running the tiny model on 127.0.0.1: a real OpenAI-compatible server."""
    from tests.helpers import start_transformers_server

    process, url = start_transformers_server(tiny_model)
    yield url
    process.terminate()
    process.wait(timeout=30)


# -- the real pretrained Qwen2.5-0.5B (tests marked real_model) ------------------------------------

QWEN_FETCH = Path(__file__).resolve().parents[1].parent / "shared" / "models" / "fetch"
QWEN_MODEL = "qwen2.5-coder-0.5b-instruct"


@pytest.fixture(scope="session")
def qwen_gguf():
    pytest.importorskip("gguf")
    if not QWEN_FETCH.exists():
        pytest.skip(f"{QWEN_FETCH} not found (it lives in ../shared/models beside the repo)")
    result = subprocess.run([str(QWEN_FETCH), QWEN_MODEL], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        pytest.skip(f"{QWEN_FETCH} {QWEN_MODEL} failed: {result.stderr.strip()[-300:]}")
    return Path(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def qwen_folder(qwen_gguf):
    from hindsight.models.gguf import materialize

    return materialize(qwen_gguf, progress=False)


@pytest.fixture(scope="session")
def qwen_tokenizer(qwen_folder):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(qwen_folder)


@pytest.fixture(scope="session")
def world_sft(tmp_path_factory, qwen_gguf):
    """Selected demonstrations of the scripted teacher on two world train targets, and the recipe."""

    root = tmp_path_factory.mktemp("real-sft")
    recipe = root / "recipe.yaml"
    recipe.write_text(
        json.dumps(
            {  # JSON is YAML
                "data": {"source": "world", "max_targets": 2},
                "protocol": QWEN_PROTOCOL,
                "policy": {"backend": "hf", "model": str(qwen_gguf), "max_new_tokens": 96, "batch_size": 2},
                "distill": {"out_dir": str(root / "distill"), "candidates": 1, "max_targets": 4, "keep_quantile": 1.0},
                "train": {
                    "base_model": str(qwen_gguf),
                    "output_dir": str(root / "sft"),
                    "learning_rate": 1.0e-3,
                    "epochs": 3,
                    "per_device_batch_size": 1,
                    "gradient_accumulation_steps": 1,
                    "max_length": 4096,
                    "precision": "fp32",
                    "warmup_ratio": 0.0,
                    "lr_scheduler": "constant",
                    "data": None,
                    "lora": {"rank": 8, "alpha": 16, "target_modules": ["q_proj", "v_proj"]},
                },
                "runs_dir": str(root / "runs"),
            }
        )
    )
    distill(recipe)
    return root, recipe


@pytest.fixture(scope="session")
def qwen_lora(world_sft):
    """`accelerate launch train/sft.py` on one real demonstration: 3 LoRA steps; its output folder."""
    root, recipe = world_sft
    kept = (
        Path(SHARED or ".") / f"qwen-lora-{hashlib.sha256((root / 'distill/sft.jsonl').read_bytes()).hexdigest()[:16]}"
    )
    if SHARED and importlib.util.find_spec("vllm") and kept.exists():
        # the vLLM environment of a CI run serves the adapter its `make test` trained and tested
        shutil.copytree(kept, root / "sft", dirs_exist_ok=True)
        return root / "sft"
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--cpu",
        "--num_processes",
        "1",
        str(Path(__file__).resolve().parents[1] / "train/sft.py"),
        str(recipe),
        "--set",
        "train.max_examples=1",
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    if SHARED and not kept.exists():
        shutil.copytree(root / "sft", kept.with_suffix(".tmp"), dirs_exist_ok=True)
        kept.with_suffix(".tmp").replace(kept)
    return root / "sft"


@pytest.fixture(scope="session")
def qwen_untrained_lora(qwen_folder, tmp_path_factory):
    """A LoRA adapter as initialised (B = 0): it loads and changes nothing."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    folder = tmp_path_factory.mktemp("untrained-lora")
    untrained = get_peft_model(
        AutoModelForCausalLM.from_pretrained(qwen_folder),
        LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"),
    )
    untrained.save_pretrained(folder)
    return folder


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """`make test` runs two pytest-xdist workers with --dist loadgroup: every test of the real Qwen
    shares one worker, so its session fixtures (the dequantised model, the trained adapter) are
    built once while the other worker runs the rest one test at a time. (Keeping each module on one
    worker measured slower: a long module finishes alone.) Needs pytest < 9.2 with xdist 3.8
    (pytest-dev/pytest-xdist#1386)."""
    for item in items:
        if item.get_closest_marker("real_model") and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group("real-qwen"))
