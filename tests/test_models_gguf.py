"""GGUF model names: what needs no model (the real conversion is in test_real_model.py)."""

import json

import pytest

from hindsight.jsonl import sha256_file
from hindsight.models.gguf import (
    gguf_sha256,
    is_gguf,
    materialize,
    model_provenance,
    resolve_model,
)


def test_only_gguf_files_are_converted_other_names_pass_through():
    assert resolve_model("Qwen/Qwen3-8B") == "Qwen/Qwen3-8B" and resolve_model(None) is None
    assert is_gguf("/m/Qwen2.5.Q4_K_M.GGUF") and not is_gguf("/m/model.safetensors")
    assert model_provenance("Qwen/Qwen3-8B") == {}


def test_a_missing_gguf_file_is_named():
    with pytest.raises(FileNotFoundError, match="nowhere.gguf: no such GGUF file"):
        resolve_model("/nowhere.gguf")


def test_the_hash_of_a_gguf_file_is_remembered_and_renewed_when_the_file_changes(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"first weights")
    assert gguf_sha256(model) == sha256_file(model) == model_provenance(str(model))["gguf_sha256"]
    model.write_bytes(b"other weights, other size")
    assert gguf_sha256(model) == sha256_file(model)


def test_a_converted_folder_is_found_by_the_files_hash_without_loading_anything(tmp_path, monkeypatch):
    monkeypatch.setenv("HINDSIGHT_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"not a real GGUF: never loaded when its folder exists")
    folder = tmp_path / "cache" / "gguf" / sha256_file(model)
    folder.mkdir(parents=True)
    (folder / "gguf_source.json").write_text(json.dumps({"sha256": sha256_file(model)}))
    assert materialize(model) == folder and resolve_model(str(model)) == str(folder)
