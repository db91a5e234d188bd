"""After the load: wait until the system is quiet, then check and print the invariants."""
import datetime, re, subprocess, time, urllib.request
from concurrent.futures import ThreadPoolExecutor
from .cluster import SERVICE_KEY
from .layout import Layout
from .load import THIEF
from .net import GaveUp

FINAL = ("fulfilled", "rejected", "dead")
STREAMS = (("jobs", "verifiers"), ("verified", "fulfillers"))
# The services' cluster counters on /metrics (RedisClusterMetrics), by event.
CLUSTER_METRIC = re.compile(r'^tollgate_redis_cluster_events_total\{event="(\w+)"\} ([0-9.e+]+)$', re.MULTILINE)
# Lines of the services' logs that show a Redis Cluster path ran.
CLUSTER_LOG = re.compile(r"MOVED|ASK |TRYAGAIN|CLUSTERDOWN|UNBLOCKED|LOADING|connectionFailed|Redis connection failed|"
                         r"Redis command outcome unknown|reloading redis functions")


def pipeline_busy(redis, layout=Layout(1)):
    """What each stage still holds: pending, retrying and undelivered entries per stream of every partition
    (the run is quiet at 0)."""
    busy = {}
    for name, group in STREAMS:
        for partition in range(layout.n):
            _stream_busy(redis, layout.stream(name, partition), group, busy)
    return busy


def _stream_busy(redis, stream, group, busy):
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


def _iso_ms(text):
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class Checker:
    def __init__(self, cluster, load, tollctl, log):
        self.cluster, self.load, self.tollctl, self.log = cluster, load, tollctl, log
        self.layout = cluster.layout
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
                    redis = self.cluster.redis()
                    busy = pipeline_busy(redis, self.layout)
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
        self._chains()
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
        # A `games` user (--projects) reads their own, with their project's token.
        headers = self.load.user_headers(user) if self.load.is_games(user) else {"X-Api-Key": SERVICE_KEY}
        status, answer = self.load.ingest.request("GET", f"/v1/users/{user}/entitlements", headers=headers)
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
            # Both sides, as bought: the sandbox side is its own block unless merged (issue 42: a tester's only).
            got = view.get("coins", 0)
            if not view.get("sandboxMerged", True):
                got += (view.get("sandbox") or {}).get("coins", 0)
            if got != want:
                coin_diffs.append(f"{user}: coins {got} want {want}")
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

    def user_key(self, user, *parts, side=None):
        """A user-ledger key in the user's project (`tg:games:{…}` for a games user, docs/PROJECTS.md)."""
        key = self.layout.user_key(user, *parts, side=side)
        return key.replace("tg:", "tg:games:", 1) if self.load.is_games(user) else key

    def _transaction_records(self):
        """Each consumable transaction's ledger record: credited once, debited once if it stayed refunded,
        and no record at all for the doomed ones."""
        wanted = self.load.expect.transactions
        redis = self.cluster.redis()
        records = []
        for i in range(0, len(wanted), 1000):
            part = wanted[i:i + 1000]
            records += redis.pipeline([("HMGET", self.user_key(u, "tx", t, side=side), "state", "coins", "debited")
                                       for u, t, _, _, side in part])
        # A sandbox purchase (a tester's) must have no record on the production side.
        sandbox = [(u, t) for u, t, _, _, side in wanted if side == "sandbox"]
        leaked = [f"{u} tx {t}: a sandbox purchase recorded on the production side"
                  for (u, t), found in zip(sandbox, redis.pipeline([("EXISTS", self.user_key(u, "tx", t))
                                                                    for u, t in sandbox]) if sandbox else [])
                  if found]
        # A `games` purchase (--projects) must have no record in the default project's ledger.
        games = [(u, t) for u, t, _, _, _ in wanted if self.load.is_games(u)]
        leaked += [f"{u} tx {t}: a games purchase recorded in the default project"
                   for (u, t), found in zip(games, redis.pipeline([("EXISTS", self.layout.user_key(u, "tx", t))
                                                                   for u, t in games]) if games else [])
                   if found]
        redis.close()
        wrong = list(leaked)
        for (user, tid, coins, state, _), (got_state, got_coins, debited) in zip(wanted, records):
            if state == "none":
                good = got_state is None
            else:
                good = got_state == state and got_coins == str(coins) and \
                    debited == (str(coins) if state == "refunded" else "0")
            if not good:
                wrong.append(f"{user} tx {tid}: state={got_state} coins={got_coins} debited={debited} "
                             f"(want {state}, {coins} coins)")
        self.check("each consumable transaction recorded once with its credit and refund", not wrong,
                   f"{len(wanted) - len(wrong)}/{len(wanted)} transaction records as expected "
                   f"({len(sandbox)} on buyers' sandbox sides, none on production's; {len(games)} in the games "
                   "project, none in default's)"
                   + "".join(f"\n      {w}" for w in wrong[:10]))

    def _events_stream(self):
        """Invariant 7: every coin change is on the outbound events stream, so its deltas add up to each
        user's balance."""
        redis = self.cluster.redis()
        sums, entries = {}, 0
        for partition in range(self.layout.n):
            start = "-"
            while True:
                batch = redis.call("XRANGE", self.layout.stream("events", partition), start, "+", "COUNT", 5000)
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
                   f"{entries} events on {self.layout.n} partition(s), {len(sums)} users with coin changes"
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
        redis = self.cluster.redis()
        busy = pipeline_busy(redis, self.layout)
        redis.close()
        nonzero = {k: v for k, v in busy.items() if v}
        self.check("consumer-group pending lists and retry sets empty", not nonzero,
                   f"{len(busy)} figures over {self.layout.n} partition(s), all 0" if not nonzero
                   else ", ".join(f"{k}={v}" for k, v in nonzero.items()))

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
        """Every job in Redis, the simulator's own notification deliveries included, is final: read in its
        home partition (the first 4 hex digits of its id with N > 1), following `moved.to=K` once to
        `tg:{K}:job:<id>`. Every such pointer must reach a final job."""
        redis = self.cluster.redis()
        keys = [k for k in redis.scan(self.layout.job_pattern()) if k.count(":") == 3]
        fields = {}
        for i in range(0, len(keys), 1000):
            part = keys[i:i + 1000]
            for key, got in zip(part, redis.pipeline([("HMGET", k, "state", "moved.to") for k in part])):
                fields[key] = got
        states, copies, pointers, broken = {}, 0, 0, []
        for key, (state, moved_to) in fields.items():
            job_id = key.rsplit(":", 1)[1]
            home = self.layout.job_partition(job_id)
            if self.layout.partition_of_tag(key) != home:
                copies += 1   # a forwarded job's hash in its owner's partition: reached through its home's pointer
                continue
            if moved_to is not None:
                pointers += 1
                target = self.layout.key(int(moved_to), "job", job_id) if moved_to.isdigit() and \
                    int(moved_to) < self.layout.n else None
                followed = fields.get(target) if target else None
                if followed is None and target:
                    followed = redis.call("HMGET", target, "state", "moved.to")
                state = followed[0] if followed else None
                if state not in FINAL:
                    broken.append(f"{key} moved.to={moved_to}: {target} state={state}")
            states[key] = state
        orphans = [k for k, (s, _) in fields.items() if self.layout.partition_of_tag(k) != self.layout.job_partition(
            k.rsplit(":", 1)[1]) and s not in FINAL]
        redis.close()
        open_ = [k for k, s in states.items() if s not in FINAL]
        tally = {}
        for s in states.values():
            tally[s] = tally.get(s, 0) + 1
        self.check("every job in Redis is final (Apple's own deliveries included)", not open_ and not orphans,
                   f"{len(states)} jobs: " + ", ".join(f"{k}={v}" for k, v in sorted(tally.items(), key=str))
                   + f"; {copies} forwarded copies in owners' partitions"
                   + "".join(f"\n      {k}" for k in (open_ + orphans)[:10]))
        if self.layout.n > 1:
            self.moved_pointers = pointers
            self.check("every moved.to pointer reaches a final job", not broken,
                       f"{pointers - len(broken)}/{pointers} pointers reach a final job"
                       + "".join(f"\n      {b}" for b in broken[:10]))

    def _chains(self):
        """Each purchase chain (originalTransactionId) has its transaction records under exactly one user, and
        that user holds the chain's binding."""
        redis = self.cluster.redis()
        keys = list(redis.scan(self.layout.tx_pattern()))
        owners = {}
        for i in range(0, len(keys), 1000):
            part = keys[i:i + 1000]
            for key, (tid, otid) in zip(part, redis.pipeline([("HMGET", k, "tid", "otid") for k in part])):
                user = self.layout.user_of_tx(key)
                owners.setdefault(otid or tid or key, set()).add(user)
        chains = sorted(owners)
        bindings = {}
        for i in range(0, len(chains), 1000):
            part = chains[i:i + 1000]
            bindings.update(zip(part, redis.pipeline([("GET", self.layout.chain_key(o, "owner")) for o in part])))
        redis.close()
        wrong = []
        for otid in chains:
            users = owners[otid]
            if len(users) != 1 or bindings.get(otid) not in users:
                wrong.append(f"chain {otid}: records under {sorted(map(str, users))}, bound to {bindings.get(otid)}")
        self.check("each purchase chain's records sit under one user, who holds its binding", not wrong,
                   f"{len(chains) - len(wrong)}/{len(chains)} chains ({len(keys)} transaction records)"
                   + "".join(f"\n      {w}" for w in wrong[:10]))

    def cluster_metrics(self):
        """`tollgate_redis_cluster_events_total` summed over the verifiers' and fulfillers' /metrics, by event. Each
        process counts since its own last start (the chaos restarts them), so these are lower bounds."""
        totals = {}
        for name in self.cluster.workers:
            port = self.cluster.services[name].env.get("TOLLGATE_METRICS_PORT")
            if not port:
                continue
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                    text = response.read().decode(errors="replace")
            except OSError:
                continue
            for match in CLUSTER_METRIC.finditer(text):
                totals[match.group(1)] = totals.get(match.group(1), 0) + int(float(match.group(2)))
        return totals

    def cluster_paths(self, monkey):
        """The failover and redirect paths ran: the replicas promoted, the probe client made before the chaos
        was redirected (MOVED after the reshard) and refreshed its slot map; the services' logs show cluster errors
        they rode out, and their /metrics the cluster events they counted since their last restart (reported, not
        required: a service killed after the last failover counts none)."""
        lines = 0
        for name in self.cluster.workers:
            try:
                with open(self.cluster.services[name].log, errors="replace") as f:
                    lines += sum(1 for line in f if CLUSTER_LOG.search(line))
            except OSError:
                pass
        self.cluster_log_lines = lines
        promoted = len(monkey.primary_kills)
        wanted_kills = sum(1 for _, what, _ in monkey.schedule if what == "primary")
        wanted_reshard = any(what == "reshard" for _, what, _ in monkey.schedule)
        ok = promoted == wanted_kills and len(monkey.reshards) == int(wanted_reshard) \
            and (monkey.probe_moved > 0 or not wanted_reshard) and (monkey.probe_refreshes > 0 or not wanted_kills)
        self.check("the failover and redirect paths ran", ok,
                   f"{promoted}/{wanted_kills} primaries failed over and rejoined as replicas "
                   + "".join(f"({n}: promoted in {a:.1f}s, rejoined in {b:.1f}s) " for n, a, b in monkey.primary_kills)
                   + f"; {len(monkey.reshards)} reshard(s) "
                   + "".join(f"({c} slots :{a}->:{b} in {t:.1f}s) " for a, b, c, t in monkey.reshards)
                   + f"; checker probe: {monkey.probe_moved} MOVED, {monkey.probe_refreshes} slot-map refreshes; "
                   f"services' logs: {lines} lines naming a cluster error or path; services' /metrics "
                   f"(since each one's last start): "
                   + (", ".join(f"{k}={v}" for k, v in sorted(self.cluster_metrics().items())) or "none"))
