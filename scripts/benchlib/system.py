"""The whole system for a benchmark: a payments-configured redis-server (compose/redis.conf: AOF `appendfsync
always`, noeviction), `appstore-sim`, `ingest`, and verifier and fulfiller replicas, release builds on loopback
with free ports, as a production deployment of `com.example.app`, in a temporary directory; optionally a PostgreSQL
(scripts/postgres, fsync on) and `exporter` replicas writing the ledger into it.
"""
import http.client, os, shutil, signal, subprocess, sys, tempfile, time

from benchlib.measure import context_switches, cpu_seconds, request
from chaoslib.cluster import free_base_port, http_ok
from chaoslib.net import free_port

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SECRET = "bench-client-jwt-secret-0123456789abcdef"
BUNDLE = "com.example.app"
APP_APPLE_ID = "1234567890"


class System:
    """redis-server, appstore-sim, ingest, verifier(s) and fulfiller(s) in a temporary directory."""

    def __init__(self, bindir, replicas, notify, server_api_receipts=False, redis="server", partitions=1,
                 exporters=0, exporter_env=None):
        """`server_api_receipts`: the verifiers hold an App Store Server API key and validate receipts without
        `verifyReceipt` (TOLLGATE_RECEIPT_VALIDATION=server-api; the verifyReceipt URLs lead nowhere). `exporters`:
        that many `exporter` replicas (`exporter-1`, ...; `exporter_env` added to their environment) writing into a
        PostgreSQL started for them (`scripts/postgres up`, fsync on; its URL in `postgres_url`)."""
        self.dir = tempfile.mkdtemp(prefix="bench-e2e-")
        self.procs = {}
        self.commands = {}          # name -> (argv, env, metrics port or None): what `restart` starts again
        self.exporters, self.exporter_env = exporters, exporter_env or {}
        self.postgres_dir = self.postgres_url = None
        self.redis_port, self.sim_port, self.http_port = free_port(), free_port(), free_port()
        self.bindir, self.replicas, self.notify = bindir, replicas, notify
        self.server_api_receipts = server_api_receipts
        # "server": one redis-server; "cluster": scripts/redis-cluster's 3 primaries and 3 replicas. `partitions`
        # is TOLLGATE_PARTITIONS (a cluster needs more than one).
        self.redis_mode, self.partitions = redis, partitions
        self.cluster_dir, self.cluster_ports = None, []

    def start(self, name, argv, env=None, metrics_port=None):
        log = open(os.path.join(self.dir, f"{name}.log"), "a")
        self.procs[name] = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.commands[name] = (argv, env, metrics_port)

    def stop_process(self, name, timeout=40):
        """SIGTERM to one process (a worker's graceful shutdown), waited for; `restart` starts it again."""
        process = self.procs.pop(name)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self, name):
        """Starts a process stopped by `stop_process` again, as it was started; waits for its /healthz if it has
        one."""
        argv, env, port = self.commands[name]
        self.start(name, argv, env, port)
        if port:
            self.wait_for(name, lambda: http_ok(port, "/healthz"))

    def wait_for(self, what, check, seconds=60):
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                if check():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        sys.exit(f"error: {what} did not come up (logs were in {self.dir})")

    def up(self):
        if self.redis_mode == "cluster":
            base = free_base_port()
            self.cluster_dir = os.path.join(self.dir, "cluster")
            out = subprocess.run([os.path.join(ROOT, "scripts/redis-cluster"), "up", "--dir", self.cluster_dir,
                                  "--base-port", str(base)], cwd=ROOT, check=True, capture_output=True, text=True)
            self.redis_url = out.stdout.strip().splitlines()[-1]
            self.cluster_ports = [base + i for i in range(6)]
            self.redis_port = base
        else:
            self.start("redis", ["redis-server", os.path.join(ROOT, "compose/redis.conf"), "--port", str(self.redis_port),
                                 "--bind", "127.0.0.1", "--dir", self.dir, "--daemonize", "no", "--protected-mode", "no"])
            self.wait_for("redis-server", lambda: subprocess.run(
                ["redis-cli", "-p", str(self.redis_port), "ping"], capture_output=True, text=True).stdout.strip() == "PONG")
            self.redis_url = f"redis://127.0.0.1:{self.redis_port}"
        sim = f"http://127.0.0.1:{self.sim_port}"
        env = dict(os.environ, LOG_LEVEL="warning", SIM_PORT=str(self.sim_port), SIM_BUNDLE_ID=BUNDLE,
                   SIM_APP_APPLE_ID=APP_APPLE_ID, SIM_RETRY_SCALE="3600")
        env.pop("SIM_NOTIFY_URL", None)
        if self.notify:
            env["SIM_NOTIFY_URL"] = f"http://127.0.0.1:{self.http_port}/v1/apple/notifications"
        ca = os.path.join(self.dir, "sim-ca")
        self.start("appstore-sim", [os.path.join(self.bindir, "appstore-sim"), "--ca-dir", ca], env)
        self.wait_for("appstore-sim", lambda: os.path.getsize(os.path.join(ca, "root.der")) > 0
                      and http_ok(self.sim_port, "/sim/health"))
        env = dict(os.environ, LOG_LEVEL="warning", TOLLGATE_REDIS_URL=self.redis_url,
                   TOLLGATE_PARTITIONS=str(self.partitions),
                   TOLLGATE_HTTP_PORT=str(self.http_port), TOLLGATE_BUNDLE_ID=BUNDLE, TOLLGATE_APP_APPLE_ID=APP_APPLE_ID,
                   TOLLGATE_ENVIRONMENT="production", TOLLGATE_CATALOG=os.path.join(ROOT, "compose/catalog.json"),
                   TOLLGATE_CLIENT_JWT_SECRET=SECRET, TOLLGATE_SERVICE_KEYS="bench-service-key-0123456789abcdefghij",
                   TOLLGATE_ROOT_CERTS=os.path.join(ca, "root.der"),
                   TOLLGATE_RECEIPT_INTERMEDIATE_CERTS=os.path.join(ca, "intermediate.der"),
                   TOLLGATE_VERIFY_RECEIPT_URL=f"{sim}/verifyReceipt",
                   TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL=f"{sim}/sandbox/verifyReceipt",
                   TOLLGATE_APPSTORE_API_URL=sim, TOLLGATE_APPSTORE_API_SANDBOX_URL=f"{sim}/sandbox",
                   TOLLGATE_METRICS_HOST="127.0.0.1", TOLLGATE_OPS_ON_PUBLIC_LISTENER="true")
        if self.server_api_receipts:
            key = os.path.join(self.dir, "api-key.p8")
            with open(key, "wb") as f:
                f.write(subprocess.run("openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt",
                                       shell=True, check=True, capture_output=True).stdout)
            env.update(TOLLGATE_API_KEY_ID="BENCHKEY01", TOLLGATE_API_ISSUER_ID="bench-issuer",
                       TOLLGATE_API_PRIVATE_KEY_PATH=key, TOLLGATE_RECEIPT_VALIDATION="server-api",
                       # The fleet-wide buckets at 10x Apple's published 50/s, so that CPU, not Apple's quota, is
                       # measured (the simulator has no quota); at 100 % this path is capped near 50 receipts/s.
                       TOLLGATE_API_RATE_SCALE_PERCENT="1000",
                       TOLLGATE_VERIFY_RECEIPT_URL="http://127.0.0.1:1/verifyReceipt",
                       TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL="http://127.0.0.1:1/sandbox/verifyReceipt")
        self.start("ingest", [os.path.join(self.bindir, "ingest")], env)
        self.metrics, self.worker_names = [], []
        for role in ("verifier", "fulfiller"):
            for i in range(self.replicas):
                port = free_port()
                self.metrics.append(port)
                self.worker_names.append(f"{role}-{i + 1}")
                self.start(f"{role}-{i + 1}", [os.path.join(self.bindir, role)], dict(env, TOLLGATE_METRICS_PORT=str(port)),
                           port)
        if self.exporters:
            self.start_postgres()
            for i in range(self.exporters):
                port = free_port()
                self.start(f"exporter-{i + 1}", [os.path.join(self.bindir, "exporter")],
                           dict(env, TOLLGATE_METRICS_PORT=str(port), TOLLGATE_POSTGRES_URL=self.postgres_url,
                                **self.exporter_env), port)
                # One at a time, so that each replica's start is timed on its own.
                self.wait_for(f"exporter-{i + 1}", lambda port=port: http_ok(port, "/healthz"))
        self.wait_for("ingest", lambda: http_ok(self.http_port, "/readyz"))
        for name, (_, _, port) in self.commands.items():
            if port:
                self.wait_for(name, lambda port=port: http_ok(port, "/healthz"))

    def start_postgres(self):
        """PostgreSQL on a free loopback port, fsync on (scripts/postgres), in a directory of its own: as root the
        server runs as `postgres`, which cannot enter this system's private directory."""
        self.postgres_dir = tempfile.mkdtemp(prefix="bench-postgres-")
        up = subprocess.run([os.path.join(ROOT, "scripts/postgres"), "up", "--dir", self.postgres_dir, "--port",
                             str(free_port())], cwd=ROOT, capture_output=True, text=True)
        if up.returncode != 0:
            self.stop()
            sys.exit(f"error: scripts/postgres up failed: {up.stderr.strip()}")
        self.postgres_url = up.stdout.strip().splitlines()[-1]

    def psql(self, sql):
        """Rows (lists of text fields) of SQL run by psql against the export database."""
        out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d",
                              self.postgres_url], input=sql, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"psql: {out.stderr.strip()}")
        return [line.split("\t") for line in out.stdout.splitlines() if line]

    def postgres_cpu(self):
        """User + system CPU seconds of the PostgreSQL server: the postmaster (with the backends it has reaped) and
        its living children."""
        try:
            with open(os.path.join(self.postgres_dir, "data", "postmaster.pid")) as f:
                postmaster = int(f.readline())
        except (OSError, ValueError):
            return 0.0
        total = cpu_seconds(postmaster)
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == postmaster:
                    total += sum(int(x) for x in fields[11:13]) / os.sysconf("SC_CLK_TCK")
        return total

    def stage_means(self):
        """Mean seconds per handled entry of each worker kind, and per Apple call, from /metrics."""
        means = {}
        for name, port in zip(self.worker_names, self.metrics):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            try:
                text = request(conn, "GET", "/metrics")[1].decode()
            finally:
                conn.close()
            for metric, label in (("tollgate_handler_duration_seconds", name.split("-")[0]),
                                  ("tollgate_apple_request_duration_seconds", "apple call")):
                sums = [float(l.split()[-1]) for l in text.splitlines() if l.startswith(metric + "_sum")]
                counts = [float(l.split()[-1]) for l in text.splitlines() if l.startswith(metric + "_count")]
                if counts and sum(counts) > 0:
                    means[label] = sum(sums) / sum(counts)
        return means

    def cpu(self):
        used = {name: cpu_seconds(p.pid) for name, p in self.procs.items()}
        if self.postgres_url:
            used["postgres"] = self.postgres_cpu()
        return used

    def switches(self):
        return {name: context_switches(p.pid) for name, p in self.procs.items()}

    def redis_client(self):
        """A client of the system's Redis: one connection, or a slot-routing cluster client."""
        from chaoslib.layout import ClusterRedis
        from chaoslib.net import Redis
        return ClusterRedis(self.cluster_ports) if self.cluster_ports else Redis(self.redis_port)

    def stop(self):
        if self.cluster_dir:
            subprocess.run([os.path.join(ROOT, "scripts/redis-cluster"), "down", "--dir", self.cluster_dir,
                            "--base-port", str(self.cluster_ports[0])], cwd=ROOT, capture_output=True)
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=40)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.postgres_dir:
            subprocess.run([os.path.join(ROOT, "scripts/postgres"), "down", "--dir", self.postgres_dir], cwd=ROOT,
                           capture_output=True)
            shutil.rmtree(self.postgres_dir, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)
