import numpy as np
import pytest

from hindsight.stats import (
    paired_bootstrap,
    resampled_means,
    sign_flip_pvalue,
    win_tie_loss,
)


def test_interval_covers_a_known_effect_at_about_the_nominal_rate():
    """Simulate 400 benchmarks of 150 targets with a true mean difference of 0.05."""
    rng = np.random.default_rng(123)
    effect, covered = 0.05, 0
    trials = 400
    for trial in range(trials):
        base = rng.beta(0.6, 2.0, size=150)  # skewed, with mass near zero
        treated = base + effect + rng.normal(0, 0.15, size=150)
        result = paired_bootstrap(base, treated, n=2000, seed=trial)
        covered += result["low"] <= effect <= result["high"]
    assert 0.92 <= covered / trials <= 0.98


def test_bootstrap_is_reproducible_for_a_seed_and_varies_across_seeds():
    rng = np.random.default_rng(0)
    a, b = rng.random(300), rng.random(300)
    assert paired_bootstrap(a, b, seed=7) == paired_bootstrap(a, b, seed=7)
    assert paired_bootstrap(a, b, seed=7)["low"] != paired_bootstrap(a, b, seed=8)["low"]


def test_resampled_means_equal_a_plain_resampling_loop():
    rng = np.random.default_rng(5)
    values = rng.random((40, 3))
    fast = resampled_means(values, n=50, seed=9)
    picks = np.random.default_rng(9)
    slow = np.array([values[picks.integers(0, 40, size=40)].mean(axis=0) for _ in range(50)])
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


def test_sign_flip_test_finds_a_clear_effect_and_not_a_null_one():
    rng = np.random.default_rng(1)
    a = rng.random(200)
    assert sign_flip_pvalue(a, a + 0.1 + rng.normal(0, 0.05, 200)) < 0.001
    null_p = [sign_flip_pvalue(a, a + rng.normal(0, 0.1, 200), n=2000, seed=s) for s in range(200)]
    assert 0.02 <= np.mean(np.array(null_p) < 0.05) <= 0.09  # about 5% false positives


def test_win_tie_loss_counts_targets():
    assert win_tie_loss([0, 0.5, 1, 0.2], [0.1, 0.5, 0.5, 0.2]) == {"win": 1, "tie": 2, "loss": 1}


def test_unpaired_input_is_refused():
    with pytest.raises(ValueError, match="equal-length"):
        paired_bootstrap([0.1, 0.2], [0.1])
