"""Model helpers that need no download: tiny Qwen-architecture models for demos and tests."""
