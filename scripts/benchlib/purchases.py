"""Purchases through the running system, as an app makes them: bought at the simulator first (not timed), then
submitted to ingest with `?wait=30` (polling `GET /v1/jobs/{id}` if the wait runs out), one user per purchase,
`concurrency` at a time over keep-alive connections. Shared by scripts/bench-e2e and scripts/bench-cpu.
"""
import json, sys, time

from benchlib.measure import request, run_parallel
from benchlib.system import BUNDLE, SECRET
from chaoslib.net import user_token

PRODUCT, COINS = "com.example.coins100", 100
PATHS = {"receipt": "/v1/receipts?wait=30", "receipt-api": "/v1/receipts?wait=30", "transaction": "/v1/transactions?wait=30"}


def buy(system, count):
    """`count` consumables bought at the simulator: (receipt, signedTransaction) each."""
    body = json.dumps({"productId": PRODUCT, "type": "Consumable", "environment": "Production",
                       "bundleId": BUNDLE}).encode()

    def one(conn, _):
        status, answer = request(conn, "POST", "/sim/purchases", body, {"Content-Type": "application/json"})
        if status != 201:
            raise RuntimeError(f"simulator purchase answered {status}: {answer[:200]!r}")
        bought = json.loads(answer)
        return bought["receipt"], bought["signedTransaction"]

    _, bought, _ = run_parallel(count, 8, system.sim_port, one)
    if any(b is None or b[0] == "error" for b in bought):
        sys.exit("error: buying at the simulator failed")
    return bought


def submit(system, bought, kind, first, count, concurrency):
    """Submits bought[first:first + count] as users bench-user-<index>; returns (seconds, results, client CPU
    seconds, CPU seconds each process used meanwhile, context switches each made meanwhile). A result is (final status, reason, latency seconds)."""
    path = PATHS[kind]
    tokens = {i: user_token(SECRET, f"bench-user-{i}") for i in range(first, first + count)}

    def work(conn, i):
        i += first
        receipt, signed = bought[i]
        body = json.dumps({"receipt": receipt} if kind.startswith("receipt") else {"signedTransaction": signed})
        headers = {"Authorization": f"Bearer {tokens[i]}", "Content-Type": "application/json"}
        start = time.perf_counter()
        status, answer = request(conn, "POST", path, body, headers)
        job = json.loads(answer) if answer else {}
        while status == 202 and job.get("jobId"):  # the wait ran out: poll until final
            time.sleep(0.05)
            status, answer = request(conn, "GET", f"/v1/jobs/{job['jobId']}", None, headers)
            job = json.loads(answer) if answer else {}
            if job.get("status") in ("queued", "verifying", "retrying"):
                status = 202
        return (job.get("status", f"http_{status}"), job.get("reason", ""), time.perf_counter() - start)

    cpu0, switches0 = system.cpu(), system.switches()
    seconds, results, client_cpu = run_parallel(count, concurrency, system.http_port, work)
    cpu1, switches1 = system.cpu(), system.switches()
    used = {name: cpu1[name] - cpu0.get(name, 0.0) for name in cpu1}
    switches = {name: switches1[name] - switches0.get(name, 0) for name in switches1}
    return seconds, results, client_cpu, used, switches


def wrong_balances(system, first, count):
    """Users among bench-user-<first ..< first + count> whose balance is not one purchase's coins."""
    from chaoslib.layout import Layout
    layout = Layout(system.partitions)
    redis = system.redis_client()
    try:
        wrong = 0
        for i in range(first, first + count):
            coins = redis.call("HGET", layout.user_key(f"bench-user-{i}", "account"), "coins") or "0"
            wrong += coins != str(COINS)
        return wrong
    finally:
        redis.close()
