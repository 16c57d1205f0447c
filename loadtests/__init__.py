"""Load and failure-injection suite: concurrent resumable SSE clients, timed faults, invariants.

scenario.yaml ─▶ runner ─┬─ stack: Redis (AOF), retriever, generator, N gateway replicas
                         ├─ clients: N virtual users; POST, stream, drop, resume elsewhere
                         ├─ faults: kill -9 a replica, SIGSTOP the retriever, restart Redis,
                         │          slow the generator (timed steps from the scenario)
                         └─ afterwards: stored logs from Redis ─▶ invariants ─▶ report
"""
