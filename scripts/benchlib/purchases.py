"""Purchases through the running system, as an app makes them: bought at the simulator first (not timed), then
submitted to ingest with `?wait=30` (polling `GET /v1/jobs/{id}` if the wait runs out), one user per purchase,
`concurrency` at a time over keep-alive connections (`submit`), or at a fixed rate whatever the answers' pace
(`submit_paced`). Shared by scripts/bench-e2e, scripts/bench-cpu and scripts/bench-webhooks.
"""
import http.client, json, resource, sys, threading, time

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


def _submitter(bought, kind, first, count):
    """work(conn, i): submits bought[first + i] as user bench-user-<first + i> until its job is final; returns
    (final status, reason, latency seconds)."""
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

    return work


def submit(system, bought, kind, first, count, concurrency):
    """Submits bought[first:first + count] as users bench-user-<index>; returns (seconds, results, client CPU
    seconds, CPU seconds each process used meanwhile, context switches each made meanwhile). A result is (final status, reason, latency seconds)."""
    work = _submitter(bought, kind, first, count)
    cpu0, switches0 = system.cpu(), system.switches()
    seconds, results, client_cpu = run_parallel(count, concurrency, system.http_port, work)
    cpu1, switches1 = system.cpu(), system.switches()
    used = {name: cpu1[name] - cpu0.get(name, 0.0) for name in cpu1}
    switches = {name: switches1[name] - switches0.get(name, 0) for name in switches1}
    return seconds, results, client_cpu, used, switches


def submit_paced(system, bought, kind, first, count, rate, connections):
    """Submits bought[first:first + count] as users bench-user-<index>, open loop: purchase i is due at
    start + i / rate, whatever the answers before it; `connections` keep-alive connections (threads) send them,
    each taking the next due purchase when its previous one is final. Returns a dict: seconds (start to the last
    final answer), send_seconds (start to the last send), lateness (sorted seconds each send came after it was due:
    all connections busy, or the client short of CPU), results (as `submit`'s), client_cpu."""
    work = _submitter(bought, kind, first, count)
    results, lateness = [None] * count, [0.0] * count
    lock = threading.Lock()
    next_index = [0]
    last_send = [0.0]

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", system.http_port, timeout=60)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= count:
                break
            due = start + i / rate
            wait = due - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            sent = time.perf_counter()
            lateness[i] = sent - due
            with lock:
                last_send[0] = max(last_send[0], sent)
            try:
                results[i] = work(conn, i)
            except (OSError, http.client.HTTPException) as error:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", system.http_port, timeout=60)
                results[i] = ("error", str(error), 0.0)
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter() + 0.05
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    end, cpu1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    return {"seconds": end - start, "send_seconds": last_send[0] - start, "lateness": sorted(lateness),
            "results": results,
            "client_cpu": (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)}


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
