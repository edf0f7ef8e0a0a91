"""Reinforcement learning (GRPO) of a student on the search environment, after SFT or instead of it."""
