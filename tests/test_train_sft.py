"""train/sft.py end to end, launched by accelerate as a user would, on a tiny Qwen3."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hindsight.config import ConfigError
from hindsight.recipe import load_recipe
from hindsight.train.config import TrainConfig
from tests.helpers import distill, write_recipe

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("trl")


@pytest.fixture(scope="module")
def sft_set(tmp_path_factory):
    from hindsight.data import load_benchmark
    from hindsight.models.tiny import build_tiny_qwen

    root = tmp_path_factory.mktemp("train")
    corpus, _, _ = load_benchmark("world")
    model = build_tiny_qwen(root / "tiny", [f"{p.title}\n{p.abstract}" for p in corpus.papers[:2000]])
    recipe = write_recipe(root, model)
    distill(recipe)
    return root, model, recipe


def launch(recipe: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--cpu",
        "--num_processes",
        "1",
        str(ROOT / "train/sft.py"),
        str(recipe),
        *extra,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)


def test_accelerate_launch_trains_an_adapter_that_loads_and_changes_the_model(sft_set):
    root, model, recipe = sft_set
    result = launch(recipe)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "is_gradient_checkpointing" not in result.stderr  # PEFT's deprecated read, silenced
    manifest = json.loads((root / "sft" / "train_manifest.json").read_text())
    for key in (
        "base_model",
        "tokenizer_hash",
        "chat_template_hash",
        "data",
        "hyperparameters",
        "software",
        "git_commit",
        "final_loss",
        "losses",
    ):
        assert key in manifest, key
    rows = len((root / "distill" / "sft.jsonl").read_text().splitlines())
    assert (
        manifest["data"]["rows"] == rows > 0 and manifest["data"]["trained_tokens"] > 0 and manifest["data"]["sha256"]
    )
    assert manifest["hyperparameters"]["lora"]["rank"] == 8
    losses = manifest["losses"]
    assert losses[-1] < losses[0] - 0.5, losses  # the action tokens are being learned
    adapter = root / "sft" / "adapter"
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["r"] == 8 and not config.get("modules_to_save")
    assert not (adapter / "added_tokens.json").exists()
    from hindsight.policy.hf import HFPolicy

    policy = HFPolicy(str(model), adapter=str(adapter), max_new_tokens=4)
    assert policy.adapter_logit_change > 1e-4


def test_too_many_long_rows_refuse_to_start(sft_set):
    root, model, recipe = sft_set
    result = launch(recipe, "--set", "train.max_length=512", "--set", f"train.output_dir={root / 'refused'}")
    assert result.returncode != 0
    assert "rows are longer than max_length 512" in result.stderr + result.stdout
    assert not (root / "refused").exists()


def test_a_rank_vllm_cannot_serve_is_refused(tmp_path):
    recipe = write_recipe(tmp_path, tmp_path, lora={"rank": 12, "alpha": 24})
    with pytest.raises(ConfigError, match="rank: 12 cannot be served by vLLM"):
        TrainConfig.from_recipe(load_recipe(recipe))
    with pytest.raises(ConfigError, match="unknown key"):
        TrainConfig.from_recipe(load_recipe(write_recipe(tmp_path, tmp_path, epochz=1)))


def test_a_base_model_that_is_neither_a_folder_nor_a_hub_id_is_named(tmp_path, capsys):
    from hindsight.train.sft import main as sft_main

    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"train:\n  base_model: {tmp_path / 'outputs' / 'missing'}\n  lora: null\n")
    assert sft_main([str(recipe)]) == 2
    assert "is neither a model folder here nor a hub id" in capsys.readouterr().err


def test_packing_is_refused_where_packed_sequences_see_each_other(sft_set, capsys):
    """sdpa and eager attention on the CPU ignore where one packed sequence ends: training with
    padding-free batches there would let every demonstration attend to the one before it."""
    from transformers import AutoModelForCausalLM

    from hindsight.train.data import packed_logit_change
    from hindsight.train.sft import main as sft_main

    root, model, recipe = sft_set
    tiny = AutoModelForCausalLM.from_pretrained(model).eval()
    assert packed_logit_change(tiny, [], list(range(5, 40))) < 1e-5  # nothing packed before it: no change
    assert packed_logit_change(tiny, list(range(100, 140)), list(range(5, 40))) > 0.01
    assert sft_main([str(recipe), "--set", "train.packing=true", "--set", f"train.output_dir={root / 'packed'}"]) == 2
    assert "train.packing: with attention 'sdpa' packed sequences see each other" in capsys.readouterr().err
    assert not (root / "packed" / "train_manifest.json").exists()


def test_frozen_tokens_keep_their_embeddings_while_every_other_weight_trains(sft_set):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hindsight.train.freeze import frozen_rows
    from hindsight.train.sft import main as sft_main

    root, model, recipe = sft_set
    out, pattern = root / "frozen", "^Ġ[a-m]"
    assert (
        sft_main(
            [
                str(recipe),
                "--set",
                "train.lora=null",
                "--set",
                f"train.frozen_tokens={pattern}",
                "--set",
                "train.epochs=1",
                "--set",
                f"train.output_dir={out}",
            ]
        )
        == 0
    )
    rows = frozen_rows(AutoTokenizer.from_pretrained(model), pattern)
    before = AutoModelForCausalLM.from_pretrained(model).get_input_embeddings().weight
    after = AutoModelForCausalLM.from_pretrained(out / "model").get_input_embeddings().weight
    others = sorted(set(range(before.shape[0])) - set(rows))
    assert 50 < len(rows) < len(others)
    assert torch.equal(before[rows], after[rows])
    moved = (before[others] - after[others]).abs().amax(dim=1) > 0
    assert moved.float().mean() > 0.9  # through the tied LM head every other row gets a gradient
    assert json.loads((out / "train_manifest.json").read_text())["frozen_token_rows"] == len(rows)


def test_frozen_tokens_that_match_nothing_or_are_no_regex_are_refused(sft_set, tmp_path, capsys):
    from hindsight.train.sft import main as sft_main

    root, model, recipe = sft_set
    assert (
        sft_main(
            [
                str(recipe),
                "--set",
                "train.lora=null",
                "--set",
                "train.frozen_tokens=^no such token$",
                "--set",
                f"train.output_dir={tmp_path / 'none'}",
            ]
        )
        == 2
    )
    assert "matches no token" in capsys.readouterr().err
    for settings, message in [
        ({"lora": None, "frozen_tokens": "(unclosed"}, "is not a regular expression"),
        ({"frozen_tokens": "^a"}, "is for full fine-tuning"),
        ({"lora": None, "frozen_tokens": "^a", "weight_decay": 0.1}, "needs weight_decay 0"),
    ]:
        with pytest.raises(ConfigError, match=message):
            TrainConfig.from_recipe(load_recipe(write_recipe(tmp_path, tmp_path, **settings)))


def test_frozen_rows_get_no_gradient_in_an_untied_lm_head_either():
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from hindsight.train.freeze import freeze_token_rows

    config = Qwen3Config(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        tie_word_embeddings=False,
    )
    model = Qwen3ForCausalLM(config)
    assert model.get_input_embeddings().weight is not model.get_output_embeddings().weight
    freeze_token_rows(model, [3, 5])
    ids = torch.tensor([[3, 5, 7, 9, 3, 5, 7, 9]])
    model(input_ids=ids, labels=ids).loss.backward()
    for weight in (model.get_input_embeddings().weight, model.get_output_embeddings().weight):
        assert weight.grad[[3, 5]].abs().sum() == 0 and weight.grad[[7, 9]].abs().sum() > 0


@pytest.mark.parametrize("enabled", [True, False])
def test_checkpointing_is_passed_under_its_current_name_without_a_deprecation_warning(enabled, tmp_path):
    import warnings

    from trl import SFTConfig

    from hindsight.train.sft import checkpointing_flag, precision_flags

    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        args = SFTConfig(
            output_dir=str(tmp_path), report_to=[], **precision_flags("fp32"), **checkpointing_flag(SFTConfig, enabled)
        )
    assert args.gradient_checkpointing is enabled


def test_one_process_repeats_no_example_because_accelerate_does_not_shard_its_loader():
    from accelerate.data_loader import prepare_data_loader
    from torch.utils.data import DataLoader

    from hindsight.trainer_args import repeated_examples

    for examples in range(1, 12):
        loader = prepare_data_loader(DataLoader(list(range(examples)), batch_size=4), num_processes=1, process_index=0)
        shown = [int(i) for batch in loader for i in batch]
        assert shown == list(range(examples))
        assert repeated_examples(examples, 4, 1) == 0


@pytest.mark.parametrize("world_size", [2, 3, 8])
@pytest.mark.parametrize("per_device", [1, 2, 4])
def test_repeated_examples_counts_what_accelerates_sharded_sampler_shows_twice(world_size, per_device):
    from accelerate.data_loader import BatchSamplerShard
    from torch.utils.data import BatchSampler, SequentialSampler

    from hindsight.trainer_args import repeated_examples

    for examples in range(1, 20):
        batches = BatchSampler(SequentialSampler(range(examples)), per_device, drop_last=False)
        shown = [
            i
            for rank in range(world_size)
            for batch in BatchSamplerShard(batches, world_size, rank, even_batches=True)
            for i in batch
        ]
        assert sorted(set(shown)) == list(range(examples))
        assert repeated_examples(examples, per_device, world_size) == len(shown) - examples


class Crash(Exception):
    pass


def _crash_at_step_three():
    from transformers import TrainerCallback

    class CrashAtStep(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            if state.global_step == 3:
                raise Crash

    return CrashAtStep()


def _adapter_weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter" / "adapter_model.safetensors"))


@pytest.mark.slow
def test_an_interrupted_training_resumes_from_its_last_checkpoint_to_the_weights_of_an_unbroken_one(sft_set):
    import torch
    from transformers import TrainerCallback

    from hindsight.resume import checkpoints
    from hindsight.train.sft import main as sft_main
    from hindsight.train.sft import train

    class CountSteps(TrainerCallback):
        steps = 0

        def on_step_begin(self, args, state, control, **kwargs):
            self.steps += 1

    root, _, recipe = sft_set
    sets = ["train.save_every=2", "train.epochs=2"]
    unbroken, broken = root / "unbroken", root / "broken"
    assert (
        sft_main([str(recipe), *(f for s in sets for f in ("--set", s)), "--set", f"train.output_dir={unbroken}"]) == 0
    )
    loaded = load_recipe(recipe, [*sets, f"train.output_dir={broken}"])
    with pytest.raises(Crash):
        train(loaded, TrainConfig.from_recipe(loaded), callbacks=(_crash_at_step_three(),))
    assert [path.name for path in checkpoints(broken)] == ["checkpoint-2"]
    counted = CountSteps()
    manifest = train(loaded, TrainConfig.from_recipe(loaded), callbacks=(counted,))
    assert manifest["resumed_from"] == "checkpoint-2" and manifest["steps"] > 3
    assert counted.steps == manifest["steps"] - 2  # the two checkpointed steps were not run again
    assert manifest["timing"]["steps_run"] == counted.steps and manifest["timing"]["seconds"] > 0
    assert json.loads((unbroken / "train_manifest.json").read_text())["resumed_from"] is None
    assert not checkpoints(broken) and not checkpoints(unbroken)
    a, b = _adapter_weights(unbroken), _adapter_weights(broken)
    assert a.keys() == b.keys() and all(torch.equal(a[name], b[name]) for name in a)


def test_checkpoints_of_a_training_with_other_settings_are_not_resumed(sft_set, capsys):
    from hindsight.train.sft import main as sft_main
    from hindsight.train.sft import train

    root, _, recipe = sft_set
    out = root / "changed"
    loaded = load_recipe(recipe, ["train.save_every=2", f"train.output_dir={out}"])
    with pytest.raises(Crash):
        train(loaded, TrainConfig.from_recipe(loaded), callbacks=(_crash_at_step_three(),))
    assert (
        sft_main(
            [
                str(recipe),
                "--set",
                "train.save_every=2",
                "--set",
                f"train.output_dir={out}",
                "--set",
                "train.learning_rate=0.5",
            ]
        )
        != 0
    )
    error = capsys.readouterr().err
    assert "train.learning_rate" in error and "checkpoint-*" in error and str(out) in error
    assert (out / "checkpoint-2" / "trainer_state.json").is_file()  # nothing was lost


@pytest.mark.parametrize(
    ("examples", "per_device", "world", "accumulation", "epochs", "steps"),
    [(10, 1, 1, 1, 1, 10), (10, 2, 1, 1, 3, 15), (10, 1, 2, 1, 1, 5), (10, 1, 2, 2, 2, 6), (3, 1, 2, 1, 1, 2)],
)
def test_optimizer_steps_count_as_the_trainer_does(examples, per_device, world, accumulation, epochs, steps):
    from hindsight.train.sft import optimizer_steps

    assert optimizer_steps(examples, per_device, world, accumulation, epochs) == steps


def test_the_schedule_warms_up_over_the_asked_share_of_the_steps(tmp_path):
    """train.warmup_ratio becomes whole warmup steps, which every transformers version reads as
    steps: the scheduler the Trainer builds from these arguments rises for 5 of 10 steps, then decays."""
    import torch
    from transformers import get_scheduler

    from hindsight.train.config import TrainConfig
    from hindsight.train.sft import trainer_arguments

    cfg = TrainConfig(
        output_dir=str(tmp_path),
        warmup_ratio=0.5,
        lr_scheduler="linear",
        epochs=1,
        learning_rate=1.0,
        precision="fp32",
        per_device_batch_size=1,
        gradient_accumulation_steps=1,
    )
    args = trainer_arguments(cfg, examples=10)
    assert args.warmup_steps == 5 and args.get_warmup_steps(10) == 5
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=args.learning_rate)
    scheduler = get_scheduler(args.lr_scheduler_type, optimizer, args.get_warmup_steps(10), 10)
    rates = []
    for _ in range(10):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert rates[:6] == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert rates[6] < rates[5] and rates[-1] < rates[6]


def test_no_warmup_is_zero_steps(tmp_path):
    from hindsight.train.config import TrainConfig
    from hindsight.train.sft import trainer_arguments

    cfg = TrainConfig(output_dir=str(tmp_path), warmup_ratio=0.0, epochs=1, precision="fp32")
    assert trainer_arguments(cfg, examples=10).warmup_steps == 0


@pytest.mark.slow
def test_the_student_kept_at_epoch_one_is_the_one_epoch_student(sft_set):
    """train.save_epochs: under a constant rate, epoch-1/ of a two-epoch run holds the weights, steps
    and losses of a one-epoch run, in a folder evaluation reads as a student; a fresh run drops the
    epoch folders an earlier run left."""
    import torch

    from hindsight.stages import StudentManifest
    from hindsight.train.epochs import epoch_folders
    from hindsight.train.sft import train

    root, _, recipe = sft_set
    sets = ["train.lr_scheduler=constant", "train.warmup_ratio=0"]
    two, one = root / "two-epochs", root / "one-epoch"
    (two / "epoch-3").mkdir(parents=True)  # left by an earlier run of other settings
    for folder, extra in ((two, ["train.epochs=2", "train.save_epochs=true"]), (one, ["train.epochs=1"])):
        loaded = load_recipe(recipe, [*sets, *extra, f"train.output_dir={folder}"])
        train(loaded, TrainConfig.from_recipe(loaded))
    assert list(epoch_folders(two)) == [1]
    assert StudentManifest.read(two / "epoch-1").output == two / "epoch-1" / "adapter"
    kept = json.loads((two / "epoch-1" / "train_manifest.json").read_text())
    alone = json.loads((one / "train_manifest.json").read_text())
    assert kept["steps"] == alone["steps"] and kept["hyperparameters"]["epochs"] == 1
    assert kept["losses"] == pytest.approx(alone["losses"], rel=1e-5)
    at_one, alone_weights, at_two = _adapter_weights(two / "epoch-1"), _adapter_weights(one), _adapter_weights(two)
    assert at_one.keys() == alone_weights.keys()
    assert all(torch.allclose(at_one[name], alone_weights[name], atol=1e-6) for name in at_one)
    assert any(not torch.allclose(at_one[name], at_two[name], atol=1e-6) for name in at_one)


def test_the_manifest_names_the_commit_that_trained_not_the_one_checked_out_at_the_end(sft_set, monkeypatch):
    """A checkout pulled while a long training runs has another HEAD when the manifest is written;
    the manifest keeps the commit the training started from."""
    from transformers import TrainerCallback

    import hindsight.train.sft as sft

    checked_out = ["abc123-at-start"]
    monkeypatch.setattr(sft, "git_commit", lambda: checked_out[0])

    class PullDuringTraining(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            checked_out[0] = "def456-pulled-later"

    root, _, recipe = sft_set
    loaded = load_recipe(recipe, ["train.max_examples=1", f"train.output_dir={root / 'pulled'}"])
    manifest = sft.train(loaded, TrainConfig.from_recipe(loaded), callbacks=(PullDuringTraining(),))
    assert checked_out[0] == "def456-pulled-later"
    assert manifest["git_commit"] == "abc123-at-start"
    assert json.loads((root / "pulled" / "train_manifest.json").read_text())["git_commit"] == "abc123-at-start"
