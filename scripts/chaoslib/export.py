"""`scripts/chaos --export`: a PostgreSQL 15 (scripts/postgres up --fast, in the run directory, on a free port) and two
exporters writing the ledger's events and records into it while the monkey SIGKILLs them (each once, and among the
random kills) and stops PostgreSQL once mid-load for 10-20 s. At the end, after the other checks, the exporter group
must have drained every events stream (nothing pending, nothing after its last-delivered id), and
`tollctl audit --export` must find the database equal to the ledger."""
import os
import re
import subprocess
import time
import urllib.request

GROUP = "exporter"
# `tollctl audit --export` ends with this line (and exits 1 when N > 0).
AUDIT_LINE = re.compile(r"^export audit: (\d+) differences?$", re.MULTILINE)


class Postgres:
    """The run's PostgreSQL, through scripts/postgres: `up` (initdb the first time), `down` (fast shutdown)."""

    def __init__(self, repo, directory, port):
        self.script = os.path.join(repo, "scripts", "postgres")
        self.dir, self.port = directory, port
        self.url = f"postgres://postgres:tollgate@127.0.0.1:{port}/tollgate"
        self.log = os.path.join(directory, "postgres.log")
        self.running = False
        self.outages = []   # seconds down, one per outage

    def up(self):
        done = subprocess.run([self.script, "up", "--fast", "--dir", self.dir, "--port", str(self.port)],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"scripts/postgres up failed ({done.returncode}): {done.stderr.strip()[-800:]}")
        url = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
        if url != self.url:
            raise RuntimeError(f"scripts/postgres up printed {url!r}, expected {self.url!r}")
        self.running = True

    def down(self):
        if not self.running:
            return
        done = subprocess.run([self.script, "down", "--dir", self.dir], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"scripts/postgres down failed ({done.returncode}): {done.stderr.strip()[-800:]}")
        self.running = False

    def tail(self, lines=25):
        try:
            with open(self.log, "rb") as f:
                return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
        except OSError:
            return "(no log)"


def define(cluster, free_port):
    """The run's PostgreSQL and two exporters, with the fulfillers' environment (short claim time) plus the database
    URL and their own metrics ports (before start_all, which starts PostgreSQL first). tollctl gets the URL too."""
    # mkdtemp made the run directory 0700: the server runs as the postgres user (scripts/postgres, as root) and has
    # to reach its data directory inside it.
    os.chmod(cluster.root, 0o755)
    cluster.postgres = Postgres(cluster.repo, os.path.join(cluster.root, "postgres"), free_port())
    cluster.env["TOLLGATE_POSTGRES_URL"] = cluster.postgres.url
    exporter = dict(cluster.env, **{
        "TOLLGATE_METRICS_HOST": "127.0.0.1",
        # The catalog of the project it exports (the default one's, with --projects).
        "TOLLGATE_CATALOG": getattr(cluster, "catalog", cluster.env.get("TOLLGATE_CATALOG", "")),
        "TOLLGATE_CLAIM_MIN_IDLE_MS": "4000", "TOLLGATE_CLAIM_INTERVAL_MS": "1000",
    })
    for i in range(2):
        port = free_port()
        cluster._add(f"exporter-{i}", [cluster._bin("exporter")], dict(exporter, TOLLGATE_METRICS_PORT=str(port)),
                     (lambda p: lambda: _http_ok(p))(port))


def _http_ok(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as answer:
        return answer.status == 200


def outage(cluster, seconds, log):
    """Stops PostgreSQL (fast shutdown: the exporters' open transactions roll back) for `seconds`, then starts it
    again on the same port and data directory."""
    postgres = cluster.postgres
    log(f"export: stopping PostgreSQL for {seconds:.0f} s (scripts/postgres down)")
    began = time.monotonic()
    postgres.down()
    time.sleep(seconds)
    postgres.up()
    down = time.monotonic() - began
    postgres.outages.append(down)
    log(f"export: PostgreSQL is back after {down:.1f} s")


def group_busy(cluster):
    """{events stream: what the exporter group still holds} for every partition's events stream that does: its
    pending count and the entries after its last-delivered id (not XINFO's `lag`, which Redis 7.0 overstates for
    good after a restart, as chaoslib/checks.py explains), or that the group does not exist on a stream that does."""
    redis = cluster.redis()
    busy = {}
    try:
        for partition in range(cluster.layout.n):
            stream = cluster.layout.stream("events", partition)
            if not redis.call("EXISTS", stream):
                continue
            groups = {}
            for info in redis.call("XINFO", "GROUPS", stream):
                fields = dict(zip(info[0::2], info[1::2]))
                groups[fields.get("name")] = fields
            fields = groups.get(GROUP)
            if fields is None:
                busy[stream] = "no exporter group"
                continue
            after = redis.call("XRANGE", stream, "(" + fields["last-delivered-id"], "+", "COUNT", 1000)
            pending = int(fields.get("pending", 0))
            if pending or after:
                busy[stream] = f"pending={pending} unread={len(after)} (lag={fields.get('lag')})"
    finally:
        redis.close()
    return busy


def check(checker, cluster, deadline, log):
    """Waits (up to `deadline` s) until the exporter group has drained every events stream, then runs
    `tollctl audit --export`. Two invariants; True when both hold."""
    give_up = time.monotonic() + deadline
    busy, last = {"redis": "not read yet"}, None
    began = time.monotonic()
    while True:
        try:
            busy = group_busy(cluster)
        except (OSError, RuntimeError, ConnectionError) as error:
            busy = {"redis": str(error)}
        if not busy or time.monotonic() > give_up:
            break
        if busy != last:
            log("waiting for the exporters: " + ", ".join(f"{k} {v}" for k, v in sorted(busy.items())[:4])
                + (f" (+{len(busy) - 4} streams)" if len(busy) > 4 else ""))
            last = busy
        time.sleep(1)
    drained = not busy
    checker.check("export: the exporter group drained every events stream (nothing pending or unread)", drained,
                  f"after {time.monotonic() - began:.0f} s, {cluster.layout.n} partition(s)" if drained
                  else "; ".join(f"{k}: {v}" for k, v in sorted(busy.items())[:8]))
    code, out = checker._tollctl("audit", "--export")
    match = AUDIT_LINE.search(out)
    diffs = int(match.group(1)) if match else -1
    checker.export_differences = diffs if match else "?"
    ok = code == 0 and diffs == 0
    lines = [line for line in out.strip().splitlines() if line.strip()]
    detail = match.group(0) if match else f"exit {code}, no 'export audit: N differences' line"
    if not ok:
        detail += f" (exit {code})" + "".join(f"\n      {line}" for line in lines[-25:])
    checker.check("export: database matches the ledger (0 differences)", ok, detail)
    return drained and ok
