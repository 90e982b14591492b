"""Evaluation: domain evaluators and the benchmark figures (pass@k)."""
