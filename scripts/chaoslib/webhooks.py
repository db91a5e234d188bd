"""`scripts/chaos --webhooks`: two notifiers deliver every event to scripts/webhook-receiver while the receiver goes
down for stretches, answers 5xx and 429, is slow, and the notifiers are SIGKILLed; then every user's events, as the
receiver logged them and deduplicated by id, must be exactly seq 1..n in order (docs/EVENTS.md)."""
import json
import os
import random
import socket
import threading
import time


SECRET = "whsec_chaos_0123456789abcdefghijklmnop"
# The receiver's misbehaviours, each for a stretch: (name, extra arguments, seconds). Each stretch is far shorter
# than the notifier's horizon, so nothing may be dead-lettered.
MODES = [
    ("down", None, 4.0),
    ("500s", ["--fail", "40"], 4.0),
    ("429 with Retry-After", ["--throttle", "40", "--retry-after", "1"], 4.0),
    ("slow", ["--delay", "1.5"], 4.0),
]


def tcp_open(port):
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def define(cluster, free_port):
    """Adds the receiver and two notifiers to the cluster's services (before start_all)."""
    cluster.webhook_port = free_port()
    cluster.webhook_log = os.path.join(cluster.root, "webhooks.jsonl")
    base_argv = ["python3", os.path.join(cluster.repo, "scripts", "webhook-receiver"), "--port",
                 str(cluster.webhook_port), "--secret", SECRET, "--log", cluster.webhook_log]
    cluster.webhook_argv = base_argv
    cluster._add("webhook-receiver", list(base_argv), dict(cluster.env), lambda: tcp_open(cluster.webhook_port))
    notifier = dict(cluster.env, **{
        "TOLLGATE_METRICS_HOST": "127.0.0.1",
        "TOLLGATE_WEBHOOK_URL": f"http://127.0.0.1:{cluster.webhook_port}/tollgate",
        "TOLLGATE_WEBHOOK_SECRETS": SECRET,
        "TOLLGATE_WEBHOOK_TIMEOUT": "3s", "TOLLGATE_WEBHOOK_LEASE": "5s", "TOLLGATE_WEBHOOK_RETRY_CAP": "2s",
        "TOLLGATE_CLAIM_MIN_IDLE_MS": "4000", "TOLLGATE_CLAIM_INTERVAL_MS": "1000",
    })
    for i in range(2):
        port = free_port()
        cluster._add(f"notifier-{i}", [cluster._bin("notifier")], dict(notifier, TOLLGATE_METRICS_PORT=str(port)),
                     (lambda p: lambda: _http_ok(p))(port))


def _http_ok(port):
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as answer:
        return answer.status == 200


class ReceiverTrouble:
    """Cycles the receiver through MODES during the load, then leaves it well; kills each notifier once."""

    def __init__(self, cluster, load, seed, log):
        self.cluster, self.load, self.log = cluster, load, log
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.stretches, self.kills = [], []
        self.thread = threading.Thread(target=self._run, name="webhook-trouble", daemon=True)

    def start(self):
        self.thread.start()

    def join(self):
        self.stop.set()
        self.thread.join()

    def _receiver(self, extra):
        """Restarts the receiver with `extra` arguments (None: keep it down)."""
        service = self.cluster.services["webhook-receiver"]
        with service.lock:
            service.down = True
            service.kill()
        if extra is None:
            return
        service.argv = self.cluster.webhook_argv + extra
        self.cluster.restart("webhook-receiver")

    def _run(self):
        modes = list(MODES)
        self.rng.shuffle(modes)
        marks = [(i + 1) / (len(modes) + 2) for i in range(len(modes))]
        kills = {0.3: "notifier-0", 0.7: "notifier-1"}
        while modes or kills:
            progress = self.load.progress()
            for mark, name in sorted(kills.items()):
                if progress >= mark or self.stop.is_set():
                    self.cluster.sigkill(name)
                    time.sleep(self.rng.uniform(0.2, 1.5))
                    self.cluster.restart(name)
                    self.kills.append(name)
                    self.log(f"webhooks: SIGKILLed {name} and restarted it")
                    del kills[mark]
            if modes and (progress >= marks[0] or self.stop.is_set()):
                marks.pop(0)
                name, extra, seconds = modes.pop(0)
                self.log(f"webhooks: the receiver is {name} for {seconds:.0f} s")
                self._receiver(extra)
                time.sleep(seconds)
                self._receiver([])
                self.stretches.append(name)
            time.sleep(0.05)


def read_log(path):
    """The receiver's log: one JSON event per line, in the order first accepted."""
    events = []
    try:
        with open(path, "rb") as f:
            for line in f:
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return events


def subject(user, side):
    """Whose sequence an event counts in: the user's, or the user's sandbox side's (its own seq, docs/EVENTS.md)."""
    return f"{user}~sandbox" if side == "sandbox" else user


def expected_seqs(cluster):
    """Every user's (and sandbox side's) last seq, from the account hashes (`events.seq`), on every primary of a
    Redis Cluster."""
    redis = cluster.redis()
    last = {}
    keys = redis.scan("tg:*:account") if cluster.clustered else _scan(redis, "tg:*:account")
    for key in list(keys):
        if not key.startswith("tg:{"):
            continue  # another project's account (--projects): its events go to that project's endpoints
        seq = redis.call("HGET", key, "events.seq")
        if seq:
            side = "sandbox" if key.endswith(":sbx:account") else None
            if side:
                key = key[:-len(":sbx:account")] + ":account"
            user = (key.split(":u:", 1)[1][:-len(":account")] if ":u:" in key
                    else key[len("tg:{u:"):].split("}", 1)[0])
            last[subject(user, side)] = int(seq)
    redis.close()
    return last


def _scan(redis, pattern):
    cursor = "0"
    while True:
        cursor, keys = redis.call("SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
        yield from keys
        if cursor == "0":
            break


def check(checker, cluster, trouble, deadline):
    """Waits (up to `deadline` s) until the receiver has every user's seq 1..n, then checks order and duplicates."""
    want = expected_seqs(cluster)
    give_up = time.monotonic() + deadline
    while True:
        got = read_log(cluster.webhook_log)
        firsts = {}
        for event in got:
            if event.get("userId") is None or event.get("project"):
                continue
            user = subject(event.get("userId"), event.get("side"))
            firsts.setdefault(user, {})
            firsts[user].setdefault(event.get("seq"), event.get("id"))
        missing = {u: n - len(firsts.get(u, {})) for u, n in want.items() if len(firsts.get(u, {})) < n}
        if not missing or time.monotonic() > give_up:
            break
        time.sleep(1)
    wrong = [f"{u}: {k} of {want[u]} events missing" for u, k in sorted(missing.items())]
    for user, seqs in sorted(firsts.items()):
        order = list(seqs)
        if order != sorted(order):
            wrong.append(f"{user}: first arrivals out of seq order {order[:12]}")
        if set(order) != set(range(1, want.get(user, 0) + 1)):
            wrong.append(f"{user}: received seqs {sorted(order)[:12]}…, want 1..{want.get(user, 0)}")
    ids = [e.get("id") for e in got if e.get("userId") is not None]
    total = sum(want.values())
    checker.check("every user's events reached the webhook once or more, exactly seq 1..n, in order", not wrong,
                  f"{total} events of {len(want)} users; {len(ids)} logged (duplicates deduplicated by id); "
                  f"receiver stretches: {', '.join(trouble.stretches)}; notifier kills: {', '.join(trouble.kills)}"
                  + "".join(f"\n      {w}" for w in wrong[:10]))
    return not wrong
