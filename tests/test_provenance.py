"""What manifests record about the models behind a run."""

import os

from hindsight.provenance import folder_fingerprint


def test_a_folder_fingerprint_is_stable_and_follows_retrained_weights(tmp_path):
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(os.urandom(3 << 20))  # sampled, not hashed whole
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    first = folder_fingerprint(tmp_path)
    assert first == folder_fingerprint(tmp_path)
    weights.write_bytes(os.urandom(3 << 20))
    assert folder_fingerprint(tmp_path) != first


def test_a_config_change_changes_the_fingerprint(tmp_path):
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    first = folder_fingerprint(tmp_path)
    (tmp_path / "config.json").write_text('{"hidden_size": 9}')
    assert folder_fingerprint(tmp_path) != first


def test_a_hub_id_has_no_fingerprint(tmp_path):
    assert folder_fingerprint("Qwen/Qwen3-0.6B") is None and folder_fingerprint(None) is None
