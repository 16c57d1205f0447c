"""Training ragway's own models from BEIR-format data (the cross-encoder reranker)."""
