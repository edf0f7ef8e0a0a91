"""policy.merge_adapter: a LoRA adapter folded into its base model's weights computes what PEFT
computes with the adapter applied, and the policies serve the folded folder in its place."""

import json

import pytest

pytest.importorskip("peft")

from hindsight.models.merge import MergeError, merge_adapter  # noqa: E402
from hindsight.recipe import PolicyConfig  # noqa: E402

ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def make_adapter(base, out, *, trained=True, seed=0, **lora):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    settings = {"r": 8, "lora_alpha": 16, "target_modules": ALL_LINEAR, **lora}
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(base), LoraConfig(**settings))
    if trained:
        with torch.no_grad():
            for name, param in model.named_parameters():
                if "lora_B" in name:
                    param.normal_(0, 0.2)
    model.save_pretrained(out)
    return out


def logits(model_folder, adapter=None):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_folder, dtype=torch.float32)
    if adapter:
        model = PeftModel.from_pretrained(model, adapter)
    ids = torch.arange(3, 40).unsqueeze(0)
    with torch.no_grad():
        return model(input_ids=ids).logits


@pytest.mark.parametrize("rslora", [False, True], ids=["alpha-over-r", "rslora"])
def test_merged_weights_compute_what_peft_computes_with_the_adapter(tiny_model, tmp_path, rslora):
    adapter = make_adapter(tiny_model, tmp_path / "adapter", use_rslora=rslora)
    merged = merge_adapter(tiny_model, adapter)
    with_peft, folded, base = logits(tiny_model, adapter), logits(merged), logits(tiny_model)
    assert (with_peft - base).abs().max() > 1e-2  # the adapter matters, so agreement means something
    assert (folded - with_peft).abs().max() < 1e-4
    source = json.loads((merged / "merged_source.json").read_text())
    assert source["adapter"] == str(adapter.resolve()) and source["adapter_fingerprint"]


def test_a_merge_is_made_once_and_again_for_an_adapter_retrained_in_place(tiny_model, tmp_path):
    adapter = make_adapter(tiny_model, tmp_path / "adapter", seed=1)
    first = merge_adapter(tiny_model, adapter)
    written = (first / "model.safetensors").stat().st_mtime_ns
    assert merge_adapter(tiny_model, adapter) == first
    assert (first / "model.safetensors").stat().st_mtime_ns == written
    make_adapter(tiny_model, adapter, seed=2)  # same path, new weights
    second = merge_adapter(tiny_model, adapter)
    assert second != first and (logits(second) - logits(tiny_model, adapter)).abs().max() < 1e-4


def test_an_untrained_adapter_is_refused(tiny_model, tmp_path):
    adapter = make_adapter(tiny_model, tmp_path / "zero", trained=False)
    with pytest.raises(MergeError, match="changes no weight"):
        merge_adapter(tiny_model, adapter)


def test_a_dora_adapter_is_refused_by_name(tiny_model, tmp_path):
    adapter = make_adapter(tiny_model, tmp_path / "dora", use_dora=True)
    with pytest.raises(MergeError, match="use_dora"):
        merge_adapter(tiny_model, adapter)


def test_an_adapter_of_another_model_is_refused_naming_the_weight(tiny_model, tmp_path):
    from safetensors.torch import load_file, save_file

    adapter = make_adapter(tiny_model, tmp_path / "adapter")
    weights = adapter / "adapter_model.safetensors"
    tensors = load_file(weights)
    key = next(k for k in tensors if k.endswith("q_proj.lora_B.weight"))
    tensors[key] = tensors[key][:-1].contiguous()  # one output row short
    save_file(tensors, weights)
    with pytest.raises(MergeError, match=r"q_proj\.weight .*another model"):
        merge_adapter(tiny_model, adapter)


def test_a_folder_that_is_no_adapter_is_refused(tiny_model, tmp_path):
    with pytest.raises(MergeError, match="not a PEFT LoRA adapter"):
        merge_adapter(tiny_model, tmp_path)


def test_the_merged_policy_writes_the_adapters_replies_and_names_what_it_folded(tiny_model, tmp_path):
    from hindsight.policy import make_policy
    from tests.test_policy_hf import TOOLS, conversations

    adapter = make_adapter(tiny_model, tmp_path / "adapter", seed=3)
    config = PolicyConfig(backend="hf", model=str(tiny_model), max_new_tokens=12)
    base = make_policy(config)
    unmerged = make_policy(config, adapter=str(adapter))
    merged = make_policy(PolicyConfig(**{**config.__dict__, "merge_adapter": True}), adapter=str(adapter))
    record = merged.describe()
    assert merged.adapter is None and record["adapter"] is None
    assert record["merged_from"]["adapter"] == str(adapter)
    assert record["merged_from"]["adapter_fingerprint"] == unmerged.describe()["adapter_fingerprint"]
    replies = {
        name: [turn.text for turn in policy.act(conversations(3), TOOLS)]
        for name, policy in (("base", base), ("unmerged", unmerged), ("merged", merged))
    }
    assert replies["merged"] == replies["unmerged"] != replies["base"]


def test_merging_through_litellm_is_refused():
    from hindsight.errors import UserError
    from hindsight.policy import make_policy

    config = PolicyConfig(backend="litellm", model="openai/x", merge_adapter=True)
    with pytest.raises(UserError, match="litellm"):
        make_policy(config, adapter="some/adapter")
