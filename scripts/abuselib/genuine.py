"""The genuine traffic of the abuse run: real users buying, renewing and being refunded while the floods run.

Each genuine user buys one thing after another: an order, a purchase at the simulator with the order's
appAccountToken (the simulator posts Apple's notification to ingest by itself), then the app's submission of
the signed transaction with the orderNo and `?wait`. Some consumables are refunded and some subscriptions renew
through the simulator (Apple's REFUND / DID_RENEW notifications). The app retries 503 and 429 like a real one
(scripts/chaoslib/net.Http); every answer is counted so the run can show what the floods cost genuine users.
"""
import random, threading, time
from chaoslib.cluster import JWT_SECRET
from chaoslib.net import GaveUp, user_token

COINS = {"com.example.coins100": 100, "com.example.coins2000": 2000}
VIP = "com.example.vip.month"


def template(ingest, sim):
    """A genuine purchase whose notification and receipt the floods copy (Apple's real header and signature)."""
    user = "abuse-template"
    headers = {"Authorization": f"Bearer {user_token(JWT_SECRET, user)}"}
    status, order = ingest.request("POST", "/v1/orders", {"productId": "com.example.coins100"}, headers)
    _, bought = sim.request("POST", "/sim/purchases", {"productId": "com.example.coins100", "type": "consumable",
                                                       "appAccountToken": order["appAccountToken"], "environment": "Production"})
    ingest.request("POST", "/v1/transactions?wait=20", {"signedTransaction": bought["signedTransaction"],
                                                        "orderNo": order["orderNo"]}, headers)
    return bought["signedPayload"], bought["receipt"]


class Genuine:
    def __init__(self, ingest, sim, purchases, users, concurrency, seed, prefix="genuine"):
        self.ingest, self.sim = ingest, sim
        self.rng = random.Random(seed)
        self.users = [f"{prefix}-u{i:03d}" for i in range(users)]
        self.purchases, self.concurrency = purchases, concurrency
        self.lock = threading.Lock()
        self.coins = {u: 0 for u in self.users}       # what each user must hold at the end
        self.jobs = []                                 # (job id, user, what) that must end fulfilled
        self.failures = []                             # answers a genuine user must never get
        self.counts = {"purchases": 0, "refunds": 0, "renewals": 0, "fulfilled_at_once": 0}
        self.latencies = []                            # seconds from a submission to its answer (?wait=20)
        self.done = 0

    def _add(self, name, n=1):
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + n

    def progress(self):
        with self.lock:
            return self.done / max(1, self.purchases)

    def run(self):
        plan = [self.users[i % len(self.users)] for i in range(self.purchases)]
        queue = {u: [self.rng.random() for _ in range(plan.count(u))] for u in self.users}
        order = list(queue.items())
        lock = threading.Lock()

        def worker(seed):
            rng = random.Random(seed)
            while True:
                with lock:
                    if not order:
                        return
                    user, rolls = order.pop()
                headers = {"Authorization": f"Bearer {user_token(JWT_SECRET, user)}"}
                for roll in rolls:
                    try:
                        self._purchase(rng, user, headers, roll)
                    except (GaveUp, ValueError, KeyError, TypeError) as error:
                        with self.lock:
                            self.failures.append(f"{user}: {type(error).__name__}: {error}")
                    with self.lock:
                        self.done += 1

        threads = [threading.Thread(target=worker, args=(self.rng.randrange(1 << 30),), daemon=True)
                   for _ in range(self.concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _sim(self, path, body):
        status, answer = self.sim.request("POST", path, body, deadline=60)
        if status not in (200, 201) or not isinstance(answer, dict):
            raise ValueError(f"simulator {path} answered {status}: {str(answer)[:160]}")
        return answer

    def _purchase(self, rng, user, headers, roll):
        product = VIP if roll < 0.2 else rng.choice(list(COINS))
        status, order = self.ingest.request("POST", "/v1/orders", {"productId": product}, headers, deadline=120)
        if status != 201:
            raise ValueError(f"order answered {status}: {str(order)[:160]}")
        bought = self._sim("/sim/purchases", {
            "productId": product, "type": "autoRenewable" if product == VIP else "consumable",
            "appAccountToken": order["appAccountToken"], "environment": "Production"})
        self._add("purchases")
        tid = bought["transactionId"]
        asked = time.monotonic()
        status, answer = self.ingest.request(
            "POST", "/v1/transactions?wait=20", {"signedTransaction": bought["signedTransaction"], "orderNo": order["orderNo"]},
            headers, deadline=180)
        with self.lock:
            self.latencies.append(time.monotonic() - asked)
        if status not in (200, 202) or not isinstance(answer, dict) or "jobId" not in answer:
            raise ValueError(f"submission of {tid} answered {status}: {str(answer)[:160]}")
        if answer.get("status") == "fulfilled":
            self._add("fulfilled_at_once")
        with self.lock:
            self.jobs.append((answer["jobId"], user, f"purchase {tid}"))
        if product == VIP:
            if rng.random() < 0.6:
                self._sim("/sim/events", {"type": "DID_RENEW", "transactionId": tid})
                self._add("renewals")
            return
        with self.lock:
            self.coins[user] += COINS[product]
        if rng.random() < 0.3:
            self._sim("/sim/events", {"type": "REFUND", "transactionId": tid})
            self._add("refunds")
            with self.lock:
                self.coins[user] -= COINS[product]

    def p99(self):
        """The 99th percentile of the submissions' round trips, in seconds (nearest rank)."""
        with self.lock:
            ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else 0.0
