"""Issue 29's attacks on the abuse run: inputs crafted to make Tollgate do unbounded work, or to get a signature or a
job they should not, each from a few attackers at the rate their own limits allow, while genuine users buy.

The crafted inputs come from `abuse-forge` (Tests/AbuseForge: the tests' own forgeries) and from the signed vectors
in Tests/Fixtures (Apple's real ones in apple-real, our test-signed ones of other apps in test-signed). What each attack request costs the services is measured from the kernel's
per-thread CPU time (/proc/PID/task/*/schedstat, nanoseconds), in a window of its own with nothing else running.
"""
import base64, glob, json, os, subprocess, threading, time, uuid
from chaoslib.cluster import JWT_SECRET
from chaoslib.net import user_token
from abuselib.floods import Tally, _parallel, _post

P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def forge(binaries, *args):
    """Runs abuse-forge with `args`; raises with its error text when it fails."""
    done = subprocess.run([os.path.join(binaries, "abuse-forge"), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"abuse-forge {args[0]}: {done.stderr.strip()[:300]}")
    return done.stdout


def lines(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def bodies(path):
    """The JSON bodies abuse-forge wrote, one a line."""
    return [json.loads(line) for line in lines(path)]


def cpu_ns(pid):
    """CPU time of every thread of `pid` so far, in nanoseconds (0 when it is gone)."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def measure(processes, send, quiet):
    """Per-request CPU of each process for the requests `send()` makes (it returns how many): the window's CPU
    minus what the same processes spend idle over as long, divided by the requests. `quiet()` waits until the
    pipeline has finished what the requests started."""
    def sample():
        return {name: cpu_ns(pid) for name, pid in processes.items()}
    start, began = sample(), time.monotonic()
    time.sleep(1.0)
    idle_ns = {name: (value - start[name]) / (time.monotonic() - began) for name, value in sample().items()}
    start, began = sample(), time.monotonic()
    count = send()
    quiet()
    elapsed, end = time.monotonic() - began, sample()
    return {name: max(0.0, (end[name] - start[name] - idle_ns[name] * elapsed) / max(1, count)) for name in processes}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def spellings(signed_payload):
    """The 32 spellings of one notification: its signature's 16 spellings of the unused bits of the last base64url
    character, for ECDSA's s and for n - s."""
    header, payload, signature = signed_payload.split(".")
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    r, s = raw[:32], int.from_bytes(raw[32:], "big")
    result = []
    for value in (raw, r + (P256_ORDER - s).to_bytes(32, "big")):
        canonical = b64url(value)
        index = ALPHABET.index(canonical[-1])
        result += [f"{header}.{payload}.{canonical[:-1]}{ALPHABET[index | unused]}" for unused in range(16)]
    return result


def post_all(port, bodies, threads, path="/v1/apple/notifications", headers_of=None):
    """Posts every body (bytes or JSON-able) on `threads` threads; returns the tally and the job ids answered."""
    tally, jobs, lock = Tally(), set(), threading.Lock()

    def one(i):
        status, parsed = _post(port, path, bodies[i], headers_of(i) if headers_of else None)
        tally.add(status, parsed)
        if isinstance(parsed, dict) and parsed.get("jobId"):
            with lock:
                jobs.add(parsed["jobId"])
    _parallel(len(bodies), threads, one)
    return tally, jobs


def paced(port, bodies, attackers, rate, running, path="/v1/apple/notifications", headers_of=None, at_least=None):
    """Each of `attackers` threads posts bodies (round-robin over its share, again and again) at `rate` a second
    while `running()` holds, and at least `at_least` bodies in all (default: each body once). Returns the tally,
    the job ids answered and how many were sent. By default each attacker posts its own share once (bodies k,
    k + attackers, ...): with a shared count a slow attacker's share went to a fast one, which then posted a body
    twice and left another unsent."""
    tally, jobs, lock, sent = Tally(), set(), threading.Lock(), [0]

    def attacker(k):
        i, next_at = k, time.monotonic()
        while True:
            with lock:
                done = i >= len(bodies) if at_least is None else sent[0] >= at_least
                if done and not running():
                    return
                sent[0] += 1
            try:
                status, parsed = _post(port, path, bodies[i % len(bodies)], headers_of(i) if headers_of else None)
                tally.add(status, parsed)
                if isinstance(parsed, dict) and parsed.get("jobId"):
                    with lock:
                        jobs.add(parsed["jobId"])
            except OSError:
                pass
            i += attackers
            next_at += 1.0 / rate
            time.sleep(max(0.0, next_at - time.monotonic()))
    workers = [threading.Thread(target=attacker, args=(k,), daemon=True) for k in range(attackers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return tally, jobs, sent[0]


def receipt_bombs(port, users, bombs, running, rate=2.0):
    """Each attacking user posts receipt bombs (a new orderNo each: a new job each) at their own rate (2/s)."""
    bodies = [{"receipt": bombs[i % len(bombs)], "orderNo": uuid.uuid4().hex} for i in range(len(users) * 40)]
    tokens = [user_token(JWT_SECRET, user) for user in users]
    return paced(port, bodies, len(users), rate, running, path="/v1/receipts", at_least=len(users) * 4,
                 headers_of=lambda i: {"Authorization": f"Bearer {tokens[i % len(tokens)]}"})


def reposted_receipt(ingest, user, receipt, times):
    """One user posts the same receipt `times` times, each with a new random orderNo (a new job each time): the
    receipt's validation is remembered, so Apple is asked for it once."""
    headers = {"Authorization": f"Bearer {user_token(JWT_SECRET, user)}"}
    tally = Tally()
    for _ in range(times):
        status, parsed = ingest.request("POST", "/v1/receipts?wait=20", {"receipt": receipt, "orderNo": uuid.uuid4().hex},
                                        headers, retry_statuses=(503,))
        tally.add(status, parsed if status >= 400 else None)
    return tally


def offer_requests(port, users, product, offer, per_user):
    """Each attacking user asks for `per_user` signatures of one limited offer."""
    tokens = [user_token(JWT_SECRET, user) for user in users]
    bodies = [{"productId": product, "offerId": offer} for _ in range(len(users) * per_user)]
    return post_all(port, bodies, len(users), path="/v1/offers/promotional",
                    headers_of=lambda i: {"Authorization": f"Bearer {tokens[i % len(tokens)]}"})[0]


def other_apps(vectors):
    """Data Apple really signed for other apps (and a test-signed REFUND of another app, whose root ingest trusts
    too), and transactions posted as notifications; `vectors` is Tests/Fixtures."""
    names = ["apple-real/notification-test-sandbox-2.jws", "apple-real/notification-test-production-1.jws",
             "test-signed/notification-refund-other_app-sandbox-1.jws", "apple-real/transaction-consumable-sandbox-1.jws",
             "apple-real/transaction-non_renewing_subscription-sandbox-1.jws",
             "apple-real/transaction-auto_renewable_subscription-sandbox-3.jws"]
    bodies = []
    for name in names:
        with open(os.path.join(vectors, name)) as f:
            bodies.append({"signedPayload": f.read().strip()})
    return bodies


def catalog(path, source):
    """The run's catalog: compose's, with rules on two promotional offers of the subscription."""
    with open(source) as f:
        spec = json.load(f)
    for product in spec["products"]:
        if product.get("type") == "autoRenewable":
            product["offers"] = [{"id": "winback_free", "eligibility": "lapsed", "perUser": 1, "window": "30d"},
                                 {"id": "loyalty", "eligibility": "active", "perUser": 2, "window": "30d"}]
    with open(path, "w") as f:
        json.dump(spec, f)
    return path
