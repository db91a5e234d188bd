"""The floods of the abuse run: what one user or one stranger can throw at ingest.

Each flood sends raw requests (no retries: a flood does not back off) and tallies the answers by status and
error code, so that the run can check that every one of them got the refusal the design promises.
"""
import base64, http.client, json, os, socket, threading, time
from collections import Counter
from chaoslib.cluster import JWT_SECRET
from chaoslib.net import user_token


def _code(parsed):
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        return parsed["error"].get("code", "")
    return ""


class Tally:
    """Answers by `status code` (thread-safe)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counter = Counter()

    def add(self, status, parsed):
        with self.lock:
            self.counter[f"{status} {_code(parsed)}".strip()] += 1

    def total(self):
        return sum(self.counter.values())

    def only(self, *allowed):
        """True when every answer is one of `allowed` (e.g. "401 invalid_signature")."""
        return set(self.counter) <= set(allowed)

    def __str__(self):
        return ", ".join(f"{k}: {v}" for k, v in sorted(self.counter.items())) or "none"


def _post(port, path, body, headers=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        conn.request("POST", path, body=data, headers=dict({"Content-Type": "application/json"}, **(headers or {})))
        response = conn.getresponse()
        raw = response.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return response.status, parsed
    finally:
        conn.close()


def _parallel(count, threads, one):
    """Calls one(i) for i in range(count) on `threads` threads."""
    lock, state = threading.Lock(), {"next": 0}

    def run():
        while True:
            with lock:
                i = state["next"]
                state["next"] += 1
            if i >= count:
                return
            try:
                one(i)
            except (OSError, http.client.HTTPException):
                pass

    workers = [threading.Thread(target=run, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def order_flood(port, count, threads=4):
    """One user asks for `count` orders: all but the cap must be `429 too_many_pending_orders`."""
    tally = Tally()
    headers = {"Authorization": f"Bearer {user_token(JWT_SECRET, 'flood-orders')}"}

    def one(_):
        tally.add(*_post(port, "/v1/orders", {"productId": "com.example.coins2000"}, headers))
    _parallel(count, threads, one)
    return tally


def forged_body(genuine_payload, i):
    """A stranger's V2 notification: Apple's real header and signature around a payload of their own (20,000 coins
    to their token), or (even `i`) a garbage signature."""
    header, _, signature = genuine_payload.split(".")

    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    claim = {"notificationType": "ONE_TIME_CHARGE", "notificationUUID": f"forged-{i}-{os.getpid()}",
             "data": {"bundleId": "com.example.app", "signedTransactionInfo": f"x.{i}.y"}}
    if i % 2:
        return {"signedPayload": f"{header}.{b64(json.dumps(claim).encode())}.{signature}"}
    return {"signedPayload": f"{header}.{b64(json.dumps(claim).encode())}.{b64(os.urandom(64))}"}


def forged_bodies(genuine_payload, count):
    """`count` forgeries with Apple's real signature (a forged signature on a cached chain: the cheapest refusal)."""
    return [forged_body(genuine_payload, 2 * i + 1) for i in range(count)]


def forged_notifications(port, genuine_payload, count, threads=4):
    """Strangers post forged V2 notifications (``forged_body``): all must be `401 invalid_signature`."""
    tally = Tally()

    def one(i):
        tally.add(*_post(port, "/v1/apple/notifications", forged_body(genuine_payload, i)))
    _parallel(count, threads, one)
    return tally


def wrong_password_v1(port, count, receipt, threads=4):
    """Strangers post V1 notifications with a guessed password: all must be `401 shared_secret_mismatch`."""
    tally = Tally()

    def one(i):
        body = {"notification_type": "INITIAL_BUY", "password": f"guess-{i}", "bid": "com.example.app",
                "unified_receipt": {"latest_receipt": receipt, "latest_receipt_info": [
                    {"transaction_id": f"9{i:09d}", "product_id": "com.example.coins2000", "quantity": "20"}]}}
        tally.add(*_post(port, "/v1/apple/notifications", body))
    _parallel(count, threads, one)
    return tally


def junk_receipts(port, users, seconds, threads=16, size=300_000):
    """A few users submit large junk receipts (`size` base64 characters) as fast as they can for `seconds`:
    each is taken (`202`, the verifier then rejects it) only within the user's rate and in-flight caps and the
    clients' byte budget; the rest are `429 rate_limited`, `429 too_many_in_flight` or `503 overloaded`. Their
    bursts alone hold several times the clients' budget, so the budget is reached."""
    tally = Tally()
    tokens = {u: {"Authorization": f"Bearer {user_token(JWT_SECRET, u)}"} for u in users}
    give_up = time.monotonic() + seconds
    blob = base64.b64encode(os.urandom(size * 3 // 4)).decode()

    def run(user):
        while time.monotonic() < give_up:
            receipt = base64.b64encode(os.urandom(12)).decode() + blob  # unique: not a dedupe hit
            try:
                tally.add(*_post(port, "/v1/receipts", {"receipt": receipt}, tokens[user]))
            except (OSError, http.client.HTTPException):
                pass
    workers = [threading.Thread(target=run, args=(users[i % len(users)],), daemon=True) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return tally


def parked_waiters(port, users, per_user, wait=15):
    """Users each hold `per_user` `?wait=` submissions at once: beyond the caps, `429 too_many_waiters`."""
    tally = Tally()

    def one(user, i):
        headers = {"Authorization": f"Bearer {user_token(JWT_SECRET, user)}"}
        receipt = base64.b64encode(f"waiter {user} {i} {os.urandom(8).hex()}".encode()).decode()
        try:
            tally.add(*_post(port, f"/v1/receipts?wait={wait}", {"receipt": receipt}, headers, timeout=wait + 15))
        except (OSError, http.client.HTTPException):
            tally.add("error", None)
    workers = [threading.Thread(target=one, args=(u, i), daemon=True) for u in users for i in range(per_user)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return tally


def slow_connections(port, count, limit):
    """Slowloris: `count` connections that send part of a request and stall (half stop inside the headers, half
    inside a body). Returns how many ingest closed within `limit` seconds, and the longest time it took."""
    sockets = []
    for i in range(count):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            continue
        if i % 2:
            s.sendall(b"POST /v1/apple/notifications HTTP/1.1\r\nHost: x\r\nContent-Length: 40000\r\n\r\n{\"signedPay")
        else:
            s.sendall(b"GET /v1/products HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        sockets.append((s, time.monotonic()))
    closed, longest = 0, 0.0
    give_up = time.monotonic() + limit
    for s, opened in sockets:
        s.settimeout(max(0.05, give_up - time.monotonic()))
        try:
            while s.recv(4096):
                pass
            closed += 1
            longest = max(longest, time.monotonic() - opened)
        except (socket.timeout, OSError):
            pass
        finally:
            s.close()
    return closed, len(sockets), longest
