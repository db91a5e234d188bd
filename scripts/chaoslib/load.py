"""The load: users buying through the public interfaces, as real apps and Apple would.

Each user's purchases run one after another (a phone does one purchase at a time); users run in parallel.
A purchase is an order (`POST /v1/orders`), a purchase at the simulator (which also sends Apple's
notification to ingest), and the app's submission (`POST /v1/receipts` with the user's growing receipt, or
`POST /v1/transactions` with the StoreKit 2 JWS). Some purchases are later refunded (and some refunds
reversed), subscriptions renew, Apple's notifications are also delivered once more by the script itself
(Apple's retries), and some transactions are presented again through the other channel.

"Doomed" purchases are App Review sandbox purchases with no order and no appAccountToken; the simulator's
sandbox verifyReceipt answers 21005 forever, so their jobs must end in the dead-letter stream and never
credit anything.

Everything the script expects is written down here: coins per user, the subscription end per user, and
every accepted job with the final state it must reach.
"""
import random, threading, time
from .cluster import GAME_BUNDLE_ID, GAMES_SECRET, GAMES_SERVICE_KEY, JWT_SECRET, SERVICE_KEY

GAMES_USER = "chaos-g"  # users of the `games` project (--projects): their own ledger, token secret and app
from .net import GaveUp, jws_payload, user_token

COINS = {"com.example.coins100": 100, "com.example.coins2000": 2000}
VIP = "com.example.vip.month"
THIEF = "chaos-thief"  # presents other users' receipts and transactions; must never be credited


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def get(self, key):
        with self.lock:
            return self.counts.get(key, 0)


class Expectations:
    """What the ledger must show at the end."""

    def __init__(self):
        self.lock = threading.Lock()
        self.coins = {}          # user -> expected balance
        self.vip_expires = {}    # user -> latest expiresDate (ms) of their vip transactions
        self.jobs = []           # (jobId, label, expected final state, user)
        self.doomed = set()      # job ids that must end dead-lettered
        self.notifications = set()  # notificationUUIDs the simulator sends (purchases and events)
        self.transactions = []   # (user, transactionId, coins, "applied" | "refunded" | "none", side)
        self.failures = []       # client-side problems (a request that never got a jobId, a 4xx ...)

    def job(self, job_id, label, state, user):
        with self.lock:
            self.jobs.append((job_id, label, state, user))
            if state == "dead":
                self.doomed.add(job_id)

    def credit(self, user, coins):
        with self.lock:
            self.coins[user] = self.coins.get(user, 0) + coins

    def vip(self, user, expires):
        with self.lock:
            self.vip_expires[user] = max(self.vip_expires.get(user, 0), expires)

    def transaction(self, user, tid, coins, state, side=None):
        """`side`: "sandbox" for a purchase on the user's sandbox side (kept apart from production's)."""
        with self.lock:
            self.transactions.append((user, tid, coins, state, side))

    def notified(self, uuid):
        if uuid:
            with self.lock:
                self.notifications.add(uuid)

    def fail(self, text):
        with self.lock:
            self.failures.append(text)


class Load:
    def __init__(self, ingest, sim, purchases, concurrency, seed, doomed, rate=0.0, projects=False):
        self.ingest, self.sim = ingest, sim
        self.rate = rate  # purchases started per second at most (0: as fast as it goes)
        self.started = 0
        self.began = time.monotonic()
        self.purchases, self.concurrency = purchases, concurrency
        self.rng = random.Random(seed)
        self.expect = Expectations()
        self.stats = Stats()
        self.done = 0
        self.done_lock = threading.Lock()
        self.projects = projects
        self.plan = self._plan(doomed)
        self.thief = {"Authorization": f"Bearer {user_token(JWT_SECRET, THIEF)}"}

    def _plan(self, doomed):
        """Per user, a list of purchase kinds; doomed purchases go to users of their own."""
        users = max(8, self.purchases // 8)
        # With --projects a quarter of the users are the `games` project's (chaos-g…), buying its app.
        plan = {(f"{GAMES_USER}{i:05d}" if self.projects and i % 4 == 1 else f"chaos-u{i:05d}"): [] for i in range(users)}
        names = list(plan)
        for _ in range(self.purchases - doomed):
            roll = self.rng.random()
            kind = "subscription" if roll < 0.12 else "consumable"
            plan[self.rng.choice(names)].append(kind)
        for i in range(doomed):
            plan[f"chaos-doomed{i:03d}"] = ["doomed"]
        return {user: kinds for user, kinds in plan.items() if kinds}

    # -- progress -------------------------------------------------------------------------------------

    def progress(self):
        with self.done_lock:
            return self.done / max(1, self.purchases)

    def _pace(self):
        """With a rate, purchase n starts no earlier than n / rate seconds into the run."""
        if self.rate <= 0:
            return
        with self.done_lock:
            due = self.began + self.started / self.rate
            self.started += 1
        time.sleep(max(0.0, due - time.monotonic()))

    def _finished_one(self):
        with self.done_lock:
            self.done += 1

    # -- running --------------------------------------------------------------------------------------

    def run(self):
        self.began = time.monotonic()
        queue = list(self.plan.items())
        self.rng.shuffle(queue)
        lock = threading.Lock()
        seeds = [self.rng.randrange(1 << 30) for _ in range(self.concurrency)]

        def worker(seed):
            rng = random.Random(seed)
            while True:
                with lock:
                    if not queue:
                        return
                    user, kinds = queue.pop()
                self._user(rng, user, kinds)

        threads = [threading.Thread(target=worker, args=(s,), daemon=True) for s in seeds]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    @staticmethod
    def is_games(user):
        """Whether `user` is the `games` project's (--projects)."""
        return user.startswith(GAMES_USER)

    @staticmethod
    def user_headers(user):
        """The user's token, signed with their project's secret."""
        return {"Authorization": f"Bearer {user_token(GAMES_SECRET if Load.is_games(user) else JWT_SECRET, user)}"}

    def _user(self, rng, user, kinds):
        headers = self.user_headers(user)
        receipt = None
        for kind in kinds:
            self._pace()
            try:
                if kind == "doomed":
                    self._doomed(user, headers)
                else:
                    receipt = self._purchase(rng, user, headers, kind, receipt)
            except GaveUp as error:
                self.expect.fail(f"{user} {kind}: {error}")
            except ClientError as error:
                self.expect.fail(f"{user} {kind}: {error}")
            self._finished_one()

    # -- one purchase -----------------------------------------------------------------------------------

    def _submit(self, path, body, headers, label, state, user):
        status, answer = self.ingest.request("POST", path, body, headers)
        if status not in (200, 202) or not isinstance(answer, dict) or "jobId" not in answer:
            raise ClientError(f"{label}: {path} answered {status}: {str(answer)[:200]}")
        self.stats.add("accepted")
        self.expect.job(answer["jobId"], label, state, user)
        return answer["jobId"]

    def _sim(self, path, body):
        status, answer = self.sim.request("POST", path, body, deadline=60)
        if status not in (200, 201) or not isinstance(answer, dict):
            raise ClientError(f"simulator {path} answered {status}: {str(answer)[:200]}")
        self.expect.notified(answer.get("notificationUUID"))
        return answer

    def _notify(self, signed_payload, label, user):
        """Apple delivering a notification (again): the same body the simulator sent."""
        self.stats.add("notifications_posted")
        return self._submit("/v1/apple/notifications", {"signedPayload": signed_payload}, {}, label, "fulfilled", user)

    def _purchase(self, rng, user, headers, kind, receipt):
        product = VIP if kind == "subscription" else rng.choice(list(COINS))
        status, order = self.ingest.request("POST", "/v1/orders", {"productId": product}, headers)
        if status != 201:
            raise ClientError(f"order answered {status}: {str(order)[:200]}")
        quantity = rng.choice([1, 1, 1, 2, 3]) if kind == "consumable" else 1
        # A tenth of the coin purchases are a tester's (App Review, TestFlight): sandbox purchases the production
        # deployment keeps on the user's sandbox side. They are submitted signed (the monkey fails sandbox
        # verifyReceipt for the doomed receipts) and never join the user's production receipt.
        sandbox = kind == "consumable" and rng.random() < 0.1
        body = {"productId": product, "type": "autoRenewable" if kind == "subscription" else "consumable",
                "quantity": quantity, "appAccountToken": order["appAccountToken"],
                "environment": "Sandbox" if sandbox else "Production"}
        if self.is_games(user):
            body["bundleId"] = GAME_BUNDLE_ID
            self.stats.add("games_purchases")
        if receipt and not sandbox:
            body["receipt"] = receipt
        bought = self._sim("/sim/purchases", body)
        self.stats.add("purchases")
        if sandbox:
            self.stats.add("sandbox_purchases")
        tid = bought["transactionId"]
        by_receipt = not sandbox and rng.random() < 0.6
        if by_receipt:
            self._submit("/v1/receipts", {"receipt": bought["receipt"], "orderNo": order["orderNo"]}, headers,
                         f"receipt {tid}", "fulfilled", user)
        else:
            self._submit("/v1/transactions", {"signedTransaction": bought["signedTransaction"],
                                              "orderNo": order["orderNo"]}, headers, f"transaction {tid}",
                         "fulfilled", user)
        if rng.random() < 0.3:
            self._notify(bought["signedPayload"], f"notification purchase {tid}", user)
        if rng.random() < 0.02:
            # Another user presents this purchase (a leaked receipt or JWS): refused, nothing credited.
            self.stats.add("thefts")
            if rng.random() < 0.5 and not sandbox:
                self._submit("/v1/receipts", {"receipt": bought["receipt"]}, self.thief, f"stolen receipt {tid}",
                             "rejected", THIEF)
            else:
                self._submit("/v1/transactions", {"signedTransaction": bought["signedTransaction"]}, self.thief,
                             f"stolen transaction {tid}", "rejected", THIEF)
        if rng.random() < 0.05:
            # The same transaction presented again through the other channel: must not credit twice.
            self.stats.add("replays")
            if by_receipt:
                self._submit("/v1/transactions", {"signedTransaction": bought["signedTransaction"]}, headers,
                             f"replay transaction {tid}", "fulfilled", user)
            elif sandbox:
                self._submit("/v1/transactions", {"signedTransaction": bought["signedTransaction"]}, headers,
                             f"replay transaction {tid}", "fulfilled", user)
            else:
                self._submit("/v1/receipts", {"receipt": bought["receipt"]}, headers, f"replay receipt {tid}",
                             "fulfilled", user)
        if kind == "subscription":
            self.expect.vip(user, jws_payload(bought["signedTransaction"])["expiresDate"])
            for _ in range(rng.choice([0, 1, 1, 2, 3])):
                renewed = self._sim("/sim/events", {"type": "DID_RENEW", "transactionId": tid})
                self.stats.add("renewals")
                self.expect.vip(user, jws_payload(renewed["signedTransaction"])["expiresDate"])
                self._notify(renewed["signedPayload"], f"notification renewal {renewed['transactionId']}", user)
        else:
            coins = COINS[product] * quantity
            refunded = False
            if rng.random() < 0.08:
                refunded = self._refund(rng, user, tid)
            if not refunded:
                self.expect.credit(user, coins)
            self.expect.transaction(user, tid, coins, "refunded" if refunded else "applied",
                                    "sandbox" if sandbox else None)
        return receipt if sandbox else bought["receipt"]

    def _refund(self, rng, user, tid):
        """Refunds a purchase; about a third of the refunds are reversed. True when it stays refunded."""
        event = self._sim("/sim/events", {"type": "REFUND", "transactionId": tid})
        self.stats.add("refunds")
        job = self._notify(event["signedPayload"], f"notification refund {tid}", user)
        if rng.random() >= 0.35:
            return True
        # Apple sends REFUND_REVERSED after the refund; wait until the refund is applied so that the
        # reversal cannot overtake it in the pipeline.
        if self.wait_final(job, deadline=240) is None:
            self.expect.fail(f"refund job {job} of {tid} not final within 240 s; reversal skipped")
            return True
        event = self._sim("/sim/events", {"type": "REFUND_REVERSED", "transactionId": tid})
        self.stats.add("refund_reversals")
        self._notify(event["signedPayload"], f"notification refund_reversed {tid}", user)
        return False

    def _doomed(self, user, headers):
        bought = self._sim("/sim/purchases", {"productId": "com.example.coins100", "type": "consumable",
                                              "environment": "Sandbox"})
        self.stats.add("purchases")
        self.stats.add("doomed")
        self._submit("/v1/receipts", {"receipt": bought["receipt"]}, headers,
                     f"doomed receipt {bought['transactionId']}", "dead", user)
        self.expect.transaction(user, bought["transactionId"], 0, "none")

    def job_status(self, job_id):
        """The job's status, read with the default project's service key, and with --projects with the `games`
        one when the first says 403: a job of one project is read with that project's key only."""
        for key in (SERVICE_KEY, GAMES_SERVICE_KEY) if self.projects else (SERVICE_KEY,):
            status, answer = self.ingest.request("GET", f"/v1/jobs/{job_id}", headers={"X-Api-Key": key})
            if status == 200 and isinstance(answer, dict):
                return answer
            if status != 403:
                return None
        return None

    def wait_final(self, job_id, deadline):
        give_up = time.monotonic() + deadline
        while time.monotonic() < give_up:
            try:
                answer = self.job_status(job_id)
            except GaveUp:
                answer = None
            if answer and answer.get("status") in ("fulfilled", "rejected", "dead"):
                return answer
            time.sleep(0.25)
        return None


class ClientError(Exception):
    """An answer a correct client must never get (a 4xx, a body without jobId)."""
