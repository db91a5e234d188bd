"""After the load: wait until the system is quiet, then check and print the invariants."""
import datetime, re, subprocess, time
from concurrent.futures import ThreadPoolExecutor
from .cluster import SERVICE_KEY
from .load import THIEF
from .net import GaveUp, Redis

FINAL = ("fulfilled", "rejected", "dead")
STREAMS = (("tg:{p0}:jobs", "verifiers"), ("tg:{p0}:verified", "fulfillers"))


def pipeline_busy(redis):
    """What each stage still holds: pending, retrying and undelivered entries per stream (the run is quiet at 0)."""
    busy = {}
    for stream, group in STREAMS:
        try:
            pending = redis.call("XPENDING", stream, group)[0]
        except RuntimeError:
            pending = 0
        busy[f"{stream} pending"] = pending
        busy[f"{stream} retrying"] = redis.call("ZCARD", stream + ":retry")
        groups = redis.call("XINFO", "GROUPS", stream) if redis.call("EXISTS", stream) else []
        for info in groups:
            fields = dict(zip(info[0::2], info[1::2]))
            if fields.get("name") == group:
                # Not XINFO's `lag`: Redis 7.0 overstates it after a restart (entries-read is not in
                # the AOF); count the entries after the group's last-delivered id instead.
                after = redis.call("XRANGE", stream, "(" + fields["last-delivered-id"], "+", "COUNT", 1000)
                busy[f"{stream} undelivered"] = len(after)
    return busy


def _iso_ms(text):
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class Checker:
    def __init__(self, cluster, load, tollctl, log):
        self.cluster, self.load, self.tollctl, self.log = cluster, load, tollctl, log
        self.results = []   # (ok, name, detail)
        self.statuses = {}  # job id -> last status answer

    # -- quiescence ----------------------------------------------------------------------------------

    def _refresh_jobs(self, pool):
        open_jobs = [j for j, *_ in self.load.expect.jobs if self.statuses.get(j, {}).get("status") not in FINAL]

        def one(job_id):
            try:
                return job_id, self.load.job_status(job_id)
            except GaveUp:
                return job_id, None
        for job_id, answer in pool.map(one, open_jobs):
            if answer:
                self.statuses[job_id] = answer
        return sum(1 for j, *_ in self.load.expect.jobs if self.statuses.get(j, {}).get("status") not in FINAL)

    def _notifications_pending(self, pool, known):
        todo = [u for u in self.load.expect.notifications if known.get(u) not in ("delivered", "failed")]

        def one(uuid):
            try:
                status, answer = self.load.sim.request("GET", f"/sim/notifications/{uuid}", deadline=30)
                return uuid, answer.get("deliveryStatus") if status == 200 else None
            except GaveUp:
                return uuid, None
        for uuid, state in pool.map(one, todo):
            known[uuid] = state
        return sum(1 for u in self.load.expect.notifications if known.get(u) not in ("delivered", "failed"))

    def wait_quiet(self, deadline):
        """Polls until every tracked job is final, the simulator has nothing left to deliver, and the
        streams have no pending, lagging or retrying entries, twice in a row. False at the deadline."""
        give_up = time.monotonic() + deadline
        delivery = {}
        quiet_rounds, last = 0, None
        with ThreadPoolExecutor(8) as pool:
            while time.monotonic() < give_up:
                open_jobs = self._refresh_jobs(pool)
                undelivered = self._notifications_pending(pool, delivery)
                try:
                    redis = Redis(self.cluster.redis_port)
                    busy = pipeline_busy(redis)
                    redis.close()
                except (OSError, RuntimeError) as error:
                    busy = {"redis": str(error)}
                state = (open_jobs, undelivered, tuple(sorted(busy.items())))
                quiet = open_jobs == 0 and undelivered == 0 and all(v == 0 for v in busy.values())
                quiet_rounds = quiet_rounds + 1 if quiet else 0
                if quiet_rounds >= 2:
                    self.delivery = delivery
                    return True
                if state != last:
                    self.log(f"waiting: {open_jobs} jobs not final, {undelivered} notifications undelivered"
                             + "".join(f", {k}={v}" for k, v in busy.items() if v))
                    last = state
                time.sleep(1.0)
        self.delivery = delivery
        return False

    # -- invariants ----------------------------------------------------------------------------------

    def check(self, name, ok, detail):
        self.results.append((ok, name, detail))

    def run_all(self):
        self._final_states()
        self._coins_and_entitlements()
        self._transaction_records()
        self._events_stream()
        self._audit()
        self._streams()
        self._dead_letters()
        self._all_job_hashes()
        return all(ok for ok, _, _ in self.results)

    def _final_states(self):
        wrong = []
        for job_id, label, expected, _ in self.load.expect.jobs:
            got = self.statuses.get(job_id, {})
            if got.get("status") != expected:
                wrong.append(f"{label} job {job_id}: {got.get('status')} {got.get('reason') or ''} (want {expected})")
        jobs = len(self.load.expect.jobs)
        self.check("every accepted request reached its final state", not wrong,
                   f"{jobs - len(wrong)}/{jobs} as expected" + "".join(f"\n      {w}" for w in wrong[:15]))
        failures = self.load.expect.failures
        self.check("every request was accepted (a jobId) or answered as a real app expects", not failures,
                   f"{len(failures)} client failures" + "".join(f"\n      {f}" for f in failures[:10]))

    def _entitlements(self, user):
        status, answer = self.load.ingest.request("GET", f"/v1/users/{user}/entitlements",
                                                  headers={"X-Api-Key": SERVICE_KEY})
        return answer if status == 200 else {"error": answer}

    def _coins_and_entitlements(self):
        expect = self.load.expect
        users = sorted(set(self.load.plan) | {THIEF})
        with ThreadPoolExecutor(8) as pool:
            views = dict(zip(users, pool.map(self._entitlements, users)))
        coin_diffs, vip_diffs = [], []
        for user in users:
            view = views[user]
            want = expect.coins.get(user, 0)
            if view.get("coins", 0) != want:
                coin_diffs.append(f"{user}: coins {view.get('coins')} want {want}")
            if user in expect.vip_expires:
                vip = next((e for e in view.get("entitlements", []) if e.get("entitlement") == "vip"), None)
                want_ms = expect.vip_expires[user]
                got_ms = _iso_ms(vip["expiresAt"]) if vip and vip.get("expiresAt") else None
                if not vip or vip.get("state") != "active" or got_ms != want_ms:
                    vip_diffs.append(f"{user}: vip {vip} want active until {want_ms}")
        total = sum(expect.coins.values())
        self.check("each purchase credited exactly once (coins per user = bought - refunded)", not coin_diffs,
                   f"{len(users) - len(coin_diffs)}/{len(users)} users match, {total} coins expected in all"
                   + "".join(f"\n      {d}" for d in coin_diffs[:15]))
        self.check("each subscription active until its latest renewal", not vip_diffs,
                   f"{len(expect.vip_expires) - len(vip_diffs)}/{len(expect.vip_expires)} subscribers match"
                   + "".join(f"\n      {d}" for d in vip_diffs[:10]))

    def _transaction_records(self):
        """Each consumable transaction's ledger record: credited once, debited once if it stayed refunded,
        and no record at all for the doomed ones."""
        wanted = self.load.expect.transactions
        redis = Redis(self.cluster.redis_port)
        records = []
        for i in range(0, len(wanted), 1000):
            part = wanted[i:i + 1000]
            records += redis.pipeline([("HMGET", f"tg:{{u:{u}}}:tx:{t}", "state", "coins", "debited")
                                       for u, t, _, _ in part])
        redis.close()
        wrong = []
        for (user, tid, coins, state), (got_state, got_coins, debited) in zip(wanted, records):
            if state == "none":
                good = got_state is None
            else:
                good = got_state == state and got_coins == str(coins) and \
                    debited == (str(coins) if state == "refunded" else "0")
            if not good:
                wrong.append(f"{user} tx {tid}: state={got_state} coins={got_coins} debited={debited} "
                             f"(want {state}, {coins} coins)")
        self.check("each consumable transaction recorded once with its credit and refund", not wrong,
                   f"{len(wanted) - len(wrong)}/{len(wanted)} transaction records as expected"
                   + "".join(f"\n      {w}" for w in wrong[:10]))

    def _events_stream(self):
        """Invariant 7: every coin change is on the outbound events stream, so its deltas add up to each
        user's balance."""
        redis = Redis(self.cluster.redis_port)
        sums, start, entries = {}, "-", 0
        while True:
            batch = redis.call("XRANGE", "tg:{p0}:events", start, "+", "COUNT", 5000)
            for entry_id, fields in batch:
                f = dict(zip(fields[0::2], fields[1::2]))
                entries += 1
                if f.get("kind") == "coins":
                    sums[f.get("user")] = sums.get(f.get("user"), 0) + int(f.get("delta", "0"))
            if len(batch) < 5000:
                break
            start = "(" + batch[-1][0]
        redis.close()
        expect = self.load.expect.coins
        wrong = [f"{u}: events add up to {sums.get(u, 0)}, want {expect.get(u, 0)}"
                 for u in sorted(set(expect) | set(sums)) if sums.get(u, 0) != expect.get(u, 0)]
        self.check("the events stream's coin deltas add up to every balance", not wrong,
                   f"{entries} events, {len(sums)} users with coin changes"
                   + "".join(f"\n      {w}" for w in wrong[:10]))

    def _tollctl(self, *args):
        done = subprocess.run([self.tollctl, *args], env=self.cluster.env, capture_output=True, text=True, timeout=300)
        return done.returncode, done.stdout + done.stderr

    def _audit(self):
        code, out = self._tollctl("audit")
        match = re.search(r"differences=(\d+)", out)
        diffs = int(match.group(1)) if match else -1
        self.audit_differences = diffs
        self.check("tollctl audit: zero differences", code == 0 and diffs == 0, out.strip().splitlines()[0]
                   if out.strip() else f"exit {code}")

    def _streams(self):
        redis = Redis(self.cluster.redis_port)
        busy = pipeline_busy(redis)
        redis.close()
        self.check("consumer-group pending lists and retry sets empty", all(v == 0 for v in busy.values()),
                   ", ".join(f"{k}={v}" for k, v in busy.items()))

    def _dead_jobs(self, stream):
        code, out = self._tollctl("dead", "list", "--stream", stream, "--count", "10000")
        return code, re.findall(r"job=(\S+)", out), out

    def _dead_letters(self):
        code, jobs, out = self._dead_jobs("jobs")
        vcode, vjobs, _ = self._dead_jobs("verified")
        doomed = self.load.expect.doomed
        self.dead_letters = len(jobs) + len(vjobs)
        extra, missing = set(jobs) - doomed, doomed - set(jobs)
        ok = code == 0 and vcode == 0 and not extra and not missing and not vjobs and len(jobs) == len(set(jobs))
        detail = (f"{len(jobs)} dead letters on jobs, {len(vjobs)} on verified; {len(doomed)} jobs had a fault "
                  f"that never cleared; unexpected {sorted(extra)[:5]}, missing {sorted(missing)[:5]}")
        if extra:
            detail += "".join(f"\n      {line}" for line in out.splitlines() if any(j in line for j in extra))
        self.check("dead-letter stream holds exactly the jobs whose faults never cleared", ok, detail)

    def _all_job_hashes(self):
        """Every job in Redis, the simulator's own notification deliveries included, is final."""
        redis = Redis(self.cluster.redis_port)
        keys = [k for k in redis.scan("tg:{p0}:job:*") if k.count(":") == 3]
        states = {}
        for i in range(0, len(keys), 1000):
            part = keys[i:i + 1000]
            for key, state in zip(part, redis.pipeline([("HGET", k, "state") for k in part])):
                states[key] = state
        redis.close()
        open_ = [k for k, s in states.items() if s not in FINAL]
        tally = {}
        for s in states.values():
            tally[s] = tally.get(s, 0) + 1
        self.check("every job in Redis is final (Apple's own deliveries included)", not open_,
                   f"{len(states)} jobs: " + ", ".join(f"{k}={v}" for k, v in sorted(tally.items(), key=str))
                   + "".join(f"\n      {k}" for k in open_[:10]))
