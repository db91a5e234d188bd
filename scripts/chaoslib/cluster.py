"""The system under test: a payments-configured redis-server, appstore-sim, ingest, two verifiers and two
fulfillers on free loopback ports, each process logging to its own file in the run's directory.

With `redis_mode="cluster"` the one redis-server is replaced by a local Redis Cluster: six nodes (`redis-0` to
`redis-5`, 3 primaries and 3 replicas, the same steps as scripts/redis-cluster up: compose/redis.conf's AOF
`always` plus cluster-enabled, node timeout 2 s) on consecutive free loopback ports, each in its own directory
(its nodes.conf there, so a killed node restarted on its port rejoins), and every service (tollctl too) runs
with the seeds in TOLLGATE_REDIS_URL and TOLLGATE_PARTITIONS.

A supervisor thread restarts any service that exits without being told to (and counts it), so that a
service which dies on its own, e.g. when Redis goes away, shows up in the summary instead of stalling the run.

With `export=True` (chaoslib/export.py) a PostgreSQL (`postgres`, not a service: scripts/postgres runs it, and
start_all starts it first, stop_all stops it last) and two exporters (`exporter-0`, `exporter-1`, workers like the
verifiers and fulfillers) join.
"""
import json
import os, signal, socket, subprocess, threading, time
from .layout import ClusterRedis, Layout
from .net import Http, Redis, free_port

BUNDLE_ID = "com.example.app"
APP_APPLE_ID = "1234567890"
JWT_SECRET = "chaos-run-client-secret-0123456789abcdef"
# With --projects: a second project, `games` (docs/PROJECTS.md), with its own app, ledger and user-token secret.
GAME_BUNDLE_ID = "com.example.game"
GAME_APP_APPLE_ID = "1234567892"
GAMES_SECRET = "chaos-run-games-secret-0123456789abcdefgh"
SERVICE_KEY = "chaos-service-key-0123456789abcdefghij"
# With --projects: the `games` project's service key (a job of one project is read with that project's key only).
GAMES_SERVICE_KEY = "chaos-games-service-key-0123456789abcdefg"


class Service:
    """One long-running process: how to start it and how to tell it is up."""

    def __init__(self, name, argv, env, log, ready):
        self.name, self.argv, self.env, self.log, self.ready = name, argv, env, log, ready
        self.proc = None
        self.down = False          # True while the chaos run keeps it stopped on purpose
        self.starts = 0
        self.unexpected_exits = []  # (time, exit code)
        self.lock = threading.RLock()  # held while the service is being started or killed

    def start(self):
        with open(self.log, "ab") as log:
            log.write(f"--- start {self.starts + 1} at {time.strftime('%H:%M:%S')} ---\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        self.starts += 1

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig=signal.SIGKILL):
        if self.alive():
            self.proc.send_signal(sig)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def wait_ready(self, timeout):
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            if not self.alive():
                return False
            try:
                if self.ready():
                    return True
            except Exception:
                pass
            time.sleep(0.1)
        return False

    def tail(self, lines=25):
        try:
            with open(self.log, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 64 * 1024))
                return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
        except OSError:
            return "(no log)"


def bin_dir(a, repo, log):
    """The directory of the executables: `--bin`, or `swift build` (unless `--no-build`) with `--release` and
    `--scratch-path` and its `--show-bin-path`."""
    if a.bin:
        return a.bin
    swift = ["swift", "build", "-c", "release" if a.release else "debug"]
    if a.scratch_path:
        swift += ["--scratch-path", a.scratch_path]
    if not a.no_build:
        log(f"building: {' '.join(swift)}")
        subprocess.run(swift, cwd=repo, check=True, stdout=subprocess.DEVNULL)
    return subprocess.run(swift + ["--show-bin-path"], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def free_base_port(count=6, low=20000, high=40000):
    """A base port P such that P..P+count-1 and their cluster bus ports (+10000) are free on loopback."""
    for base in range(low + os.getpid() % 97 * 100, high, 10):
        try:
            socks = []
            for port in [base + i for i in range(count)] + [base + 10000 + i for i in range(count)]:
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
        return base
    raise RuntimeError("no free range of loopback ports for a Redis Cluster")


def http_ok(port, path):
    status, _ = Http(port).once("GET", path)
    return status == 200


class Cluster:
    """Starts, kills and restarts the processes; `services` maps a name to its ``Service``."""

    def __init__(self, root, bin_dir, repo, log_level="info", overrides=None, redis_mode="single", partitions=16,
                 node_timeout=2000, webhooks=False, export=False, projects=False):
        """`overrides` (scripts/abuse): extra `redis_args`, and environment entries for `ingest`, `verifier`,
        `fulfiller` and `sim`. `redis_mode` "cluster": a 6-node Redis Cluster and `partitions` partitions."""
        self.root, self.bin, self.repo = root, bin_dir, repo
        self.overrides = overrides or {}
        self.clustered = redis_mode == "cluster"
        self.layout = Layout(partitions if self.clustered else 1)
        self.node_timeout = node_timeout
        self.redis_ports = []
        if self.clustered:
            base = free_base_port()
            self.redis_ports = [base + i for i in range(6)]
        self.logs = os.path.join(root, "logs")
        os.makedirs(self.logs, exist_ok=True)
        os.makedirs(os.path.join(root, "redis"), exist_ok=True)
        self.redis_port, self.sim_port, self.ingest_port = free_port(), free_port(), free_port()
        self.services = {}
        self.stopping = threading.Event()
        self.log_level = log_level
        self.webhooks = webhooks
        self.export = export
        self.projects = projects
        self.postgres = None  # chaoslib.export.Postgres with export
        self._define()

    def _define(self):
        sim_dir = os.path.join(self.root, "sim-ca")
        sim = f"http://127.0.0.1:{self.sim_port}"
        base = dict(os.environ)
        base.update({
            "LOG_LEVEL": self.log_level,
            "TOLLGATE_REDIS_URL": f"redis://127.0.0.1:{self.redis_port}",
            "TOLLGATE_KEY_PREFIX": "tg",
            "TOLLGATE_CATALOG": os.path.join(self.repo, "compose", "catalog.json"),
            # The app, shared by every service as compose's tollgate.env shares it: a production deployment that
            # accepts sandbox data (App Review); production receipts are the normal traffic, the sandbox side of
            # verifyReceipt carries the faults that never clear. Ingest checks it at the door.
            "TOLLGATE_BUNDLE_ID": BUNDLE_ID, "TOLLGATE_APP_APPLE_ID": APP_APPLE_ID,
            "TOLLGATE_ENVIRONMENT": "production", "TOLLGATE_ACCEPT_SANDBOX": "true",
        })
        if self.clustered:
            base["TOLLGATE_REDIS_URL"] = "redis://" + ",".join(f"127.0.0.1:{p}" for p in self.redis_ports)
            base["TOLLGATE_PARTITIONS"] = str(self.layout.n)
        if self.projects:
            # Two projects in TOLLGATE_APPS, which then names the apps, the catalogs and the user-token secrets.
            catalog = base.pop("TOLLGATE_CATALOG")
            for name in ("TOLLGATE_BUNDLE_ID", "TOLLGATE_APP_APPLE_ID"):
                base.pop(name)
            apps = os.path.join(self.root, "projects.json")
            with open(apps, "w") as out:
                json.dump({"projects": [
                    {"id": "default", "catalog": catalog, "clientJwtSecret": JWT_SECRET,
                     "apps": [{"bundleId": BUNDLE_ID, "appAppleId": int(APP_APPLE_ID)}]},
                    {"id": "games", "catalog": catalog, "clientJwtSecret": GAMES_SECRET,
                     "apps": [{"bundleId": GAME_BUNDLE_ID, "appAppleId": int(GAME_APP_APPLE_ID)}]},
                ]}, out)
            base["TOLLGATE_APPS"] = apps
            self.catalog = catalog
        self.env = base
        if self.clustered:
            for i, port in enumerate(self.redis_ports):
                node_dir = os.path.join(self.root, "cluster", str(port))
                os.makedirs(node_dir, exist_ok=True)
                argv = ["redis-server", os.path.join(self.repo, "compose", "redis.conf"), "--port", str(port),
                        "--bind", "127.0.0.1", "--protected-mode", "no", "--dir", node_dir,
                        "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", str(self.node_timeout), "--cluster-require-full-coverage", "no",
                        "--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1",
                        "--daemonize", "no"] + self.overrides.get("redis_args", [])
                self._add(f"redis-{i}", argv, base, (lambda p: lambda: Redis(p, timeout=1).call("PING") == "PONG")(port))
        else:
            redis_argv = ["redis-server", os.path.join(self.repo, "compose", "redis.conf"),
                          "--port", str(self.redis_port), "--bind", "127.0.0.1",
                          "--dir", os.path.join(self.root, "redis"), "--daemonize", "no"] + self.overrides.get("redis_args", [])
            self._add("redis", redis_argv, base, lambda: Redis(self.redis_port, timeout=1).call("PING") == "PONG")
        self._add("appstore-sim", [self._bin("appstore-sim"), "--ca-dir", sim_dir], dict(base, **{**{
            "SIM_PORT": str(self.sim_port), "SIM_BUNDLE_ID": BUNDLE_ID, "SIM_APP_APPLE_ID": APP_APPLE_ID,
            "SIM_NOTIFY_URL": f"http://127.0.0.1:{self.ingest_port}/v1/apple/notifications",
            "SIM_RETRY_SCALE": "3600", "SIM_NOTIFY_TIMEOUT_MS": "5000", "LOG_LEVEL": "warning",
            "SIM_APP_APPLE_IDS": json.dumps({GAME_BUNDLE_ID: int(GAME_APP_APPLE_ID)}),
        }, **self.overrides.get("sim", {})}), lambda: http_ok(self.sim_port, "/sim/health"))
        secrets = {} if self.projects else {"TOLLGATE_CLIENT_JWT_SECRET": JWT_SECRET}
        self._add("ingest", [self._bin("ingest")], dict(base, **{**secrets, **{
            "TOLLGATE_HTTP_HOST": "127.0.0.1", "TOLLGATE_HTTP_PORT": str(self.ingest_port),
            "TOLLGATE_SERVICE_KEYS": SERVICE_KEY + (
                f",chaos-games@games:read+admin:{GAMES_SERVICE_KEY}" if self.projects else ""),
            "TOLLGATE_ROOT_CERTS": os.path.join(sim_dir, "root.der"),
            # Loopback only, and the run reads /readyz and /metrics there: asked for explicitly.
            "TOLLGATE_OPS_ON_PUBLIC_LISTENER": "true",
        }, **self.overrides.get("ingest", {})}), lambda: http_ok(self.ingest_port, "/readyz"))
        worker = dict(base, **{"TOLLGATE_METRICS_HOST": "127.0.0.1"})
        verifier = dict(worker, **{**{
            "TOLLGATE_ROOT_CERTS": os.path.join(sim_dir, "root.der"),
            "TOLLGATE_RECEIPT_INTERMEDIATE_CERTS": os.path.join(sim_dir, "intermediate.der"),
            "TOLLGATE_VERIFY_RECEIPT_URL": f"{sim}/verifyReceipt",
            "TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL": f"{sim}/sandbox/verifyReceipt",
            "TOLLGATE_APPSTORE_API_URL": sim, "TOLLGATE_APPSTORE_API_SANDBOX_URL": f"{sim}/sandbox",
            "TOLLGATE_RETRY_BASE_MS": "200", "TOLLGATE_RETRY_CAP_MS": "2000", "TOLLGATE_RETRY_MAX_ATTEMPTS": "20",
            "TOLLGATE_APPLE_TIMEOUT_MS": "2000", "TOLLGATE_CLAIM_MIN_IDLE_MS": "6000",
            "TOLLGATE_CLAIM_INTERVAL_MS": "1000", "TOLLGATE_HEARTBEAT_MS": "1000",
            "TOLLGATE_VERIFIER_CONCURRENCY": "32",
        }, **self.overrides.get("verifier", {})})
        fulfiller = dict(worker, **{**{"TOLLGATE_CLAIM_MIN_IDLE_MS": "4000", "TOLLGATE_CLAIM_INTERVAL_MS": "1000"},
                                    **self.overrides.get("fulfiller", {})})
        for i in range(2):
            port = free_port()
            self._add(f"verifier-{i}", [self._bin("verifier")], dict(verifier, TOLLGATE_METRICS_PORT=str(port)),
                      (lambda p: lambda: http_ok(p, "/healthz"))(port))
        for i in range(2):
            port = free_port()
            self._add(f"fulfiller-{i}", [self._bin("fulfiller")], dict(fulfiller, TOLLGATE_METRICS_PORT=str(port)),
                      (lambda p: lambda: http_ok(p, "/healthz"))(port))
        if self.webhooks:
            from chaoslib import webhooks
            webhooks.define(self, free_port)
        if self.export:
            from chaoslib import export
            export.define(self, free_port)

    def _bin(self, name):
        return os.path.join(self.bin, name)

    def _add(self, name, argv, env, ready):
        self.services[name] = Service(name, argv, env, os.path.join(self.logs, f"{name}.log"), ready)

    @property
    def workers(self):
        return [n for n in self.services if n.startswith(("verifier", "fulfiller", "exporter"))] + ["ingest"]

    def start_all(self, timeout=120):
        if self.postgres:
            self.postgres.up()
        for name, service in self.services.items():
            service.start()
            if not service.wait_ready(timeout):
                raise RuntimeError(f"{name} did not come up within {timeout}s\n{service.tail()}")
            if self.clustered and name == f"redis-{len(self.redis_ports) - 1}":
                self._create_cluster()
        threading.Thread(target=self._supervise, name="supervisor", daemon=True).start()

    # -- Redis: one server, or the cluster ------------------------------------------------------------

    def redis(self):
        """A client for the checks: the one server, or a slot-routing client over the cluster's nodes."""
        return ClusterRedis(self.redis_ports) if self.clustered else Redis(self.redis_port)

    def node_name(self, port):
        return f"redis-{self.redis_ports.index(port)}"

    def _create_cluster(self):
        """redis-cli --cluster create (3 primaries, 1 replica each), then waits until every node says
        cluster_state:ok and CLUSTER SLOTS lists all six nodes (as scripts/redis-cluster up)."""
        log = os.path.join(self.root, "cluster", "create.log")
        with open(log, "wb") as out:
            done = subprocess.run(["redis-cli", "--cluster", "create"] + [f"127.0.0.1:{p}" for p in self.redis_ports]
                                  + ["--cluster-replicas", "1", "--cluster-yes"], stdout=out, stderr=subprocess.STDOUT,
                                  timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed; see {log}")
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up:
            if self.cluster_ok(self.redis_ports) and self._listed() >= len(self.redis_ports):
                return
            time.sleep(0.2)
        raise RuntimeError("the Redis Cluster did not reach cluster_state:ok with every replica listed in 60 s")

    def cluster_info(self, port, field):
        try:
            redis = Redis(port, timeout=2)
            try:
                info = redis.call("CLUSTER", "INFO")
            finally:
                redis.close()
        except (OSError, RuntimeError):
            return None
        for line in info.splitlines():
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip()
        return None

    def cluster_ok(self, ports):
        return all(self.cluster_info(p, "cluster_state") == "ok" for p in ports)

    def _listed(self):
        try:
            redis = Redis(self.redis_ports[0], timeout=2)
            ranges = redis.call("CLUSTER", "SLOTS")
            redis.close()
        except (OSError, RuntimeError):
            return 0
        return len({int(node[1]) for r in ranges for node in r[2:]})

    def cluster_nodes(self, port):
        """CLUSTER NODES of one node: a list of dicts id, port, flags (set), master, slots (list of (a, b))."""
        redis = Redis(port, timeout=2)
        try:
            text = redis.call("CLUSTER", "NODES")
        finally:
            redis.close()
        nodes = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) < 8:
                continue
            slots = []
            for item in parts[8:]:
                if item.startswith("["):
                    continue  # a slot being migrated
                a, _, b = item.partition("-")
                slots.append((int(a), int(b or a)))
            nodes.append({"id": parts[0], "port": int(parts[1].split("@")[0].rsplit(":", 1)[1]),
                          "flags": set(parts[2].split(",")), "master": parts[3], "link": parts[7], "slots": slots})
        return nodes

    def restart(self, name, timeout=120):
        """Starts a stopped service again and waits until it answers (a start that fails is retried)."""
        service = self.services[name]
        give_up = time.monotonic() + timeout
        with service.lock:
            while True:
                service.start()
                if service.wait_ready(max(1.0, give_up - time.monotonic())):
                    service.down = False
                    return True
                service.kill()
                if time.monotonic() > give_up:
                    service.down = False  # the supervisor keeps trying
                    return False
                time.sleep(0.5)

    def sigkill(self, name):
        service = self.services[name]
        with service.lock:
            service.down = True
            service.kill(signal.SIGKILL)

    def _supervise(self):
        while not self.stopping.is_set():
            time.sleep(0.5)
            for name, service in self.services.items():
                if not service.lock.acquire(blocking=False):
                    continue
                try:
                    if self.stopping.is_set() or service.down or service.proc is None or service.alive():
                        continue
                    service.unexpected_exits.append((time.strftime("%H:%M:%S"), service.proc.returncode))
                    service.down = True
                finally:
                    service.lock.release()
                threading.Thread(target=self.restart, args=(name,), daemon=True).start()

    def unexpected_exits(self):
        return {n: s.unexpected_exits for n, s in self.services.items() if s.unexpected_exits}

    def stop_all(self):
        self.stopping.set()
        for name in reversed(list(self.services)):
            service = self.services[name]
            service.down = True
            if service.alive():
                service.kill(signal.SIGTERM)
        if self.postgres:
            try:
                self.postgres.down()
            except (OSError, RuntimeError, subprocess.SubprocessError) as error:
                print(f"chaos: PostgreSQL did not stop: {error}", flush=True)
