"""Evaluation: metrics, benchmark data sets and the harness that runs them on the real services."""
