"""What only a GPU runs (scripts/gpu_check.sh runs these; elsewhere they skip): the trainer's
bf16 choice and a LoRA training on CUDA, and the hf policy's episodes on CUDA."""

import json

import pytest

from tests.helpers import distil_and_train

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def test_precision_auto_trains_a_lora_adapter_in_bf16_on_the_gpu(tiny_model, tmp_path):
    manifest = distil_and_train(tmp_path, tiny_model, precision="auto", epochs=1)
    assert manifest["mixed_precision"] == "bf16" and manifest["steps"] > 0
    assert all(loss == loss for loss in manifest["losses"])  # no NaN
    saved = json.loads((tmp_path / "sft" / "train_manifest.json").read_text())
    assert saved["output"].endswith("adapter")
