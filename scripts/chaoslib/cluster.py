"""The system under test: a payments-configured redis-server, appstore-sim, ingest, two verifiers and two
fulfillers on free loopback ports, each process logging to its own file in the run's directory.

A supervisor thread restarts any service that exits without being told to (and counts it), so that a
service which dies on its own, e.g. when Redis goes away, shows up in the summary instead of stalling the run.
"""
import os, signal, subprocess, threading, time
from .net import Http, Redis, free_port

BUNDLE_ID = "com.example.app"
APP_APPLE_ID = "1234567890"
JWT_SECRET = "chaos-run-client-secret-0123456789abcdef"
SERVICE_KEY = "chaos-service-key-0123456789abcdefghij"


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


def http_ok(port, path):
    status, _ = Http(port).once("GET", path)
    return status == 200


class Cluster:
    """Starts, kills and restarts the processes; `services` maps a name to its ``Service``."""

    def __init__(self, root, bin_dir, repo, log_level="info", overrides=None):
        """`overrides` (scripts/abuse): extra `redis_args`, and environment entries for `ingest`, `verifier`,
        `fulfiller` and `sim`."""
        self.root, self.bin, self.repo = root, bin_dir, repo
        self.overrides = overrides or {}
        self.logs = os.path.join(root, "logs")
        os.makedirs(self.logs, exist_ok=True)
        os.makedirs(os.path.join(root, "redis"), exist_ok=True)
        self.redis_port, self.sim_port, self.ingest_port = free_port(), free_port(), free_port()
        self.services = {}
        self.stopping = threading.Event()
        self.log_level = log_level
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
        })
        self.env = base
        redis_argv = ["redis-server", os.path.join(self.repo, "compose", "redis.conf"),
                      "--port", str(self.redis_port), "--bind", "127.0.0.1",
                      "--dir", os.path.join(self.root, "redis"), "--daemonize", "no"] + self.overrides.get("redis_args", [])
        self._add("redis", redis_argv, base, lambda: Redis(self.redis_port, timeout=1).call("PING") == "PONG")
        self._add("appstore-sim", [self._bin("appstore-sim"), "--ca-dir", sim_dir], dict(base, **{
            "SIM_PORT": str(self.sim_port), "SIM_BUNDLE_ID": BUNDLE_ID, "SIM_APP_APPLE_ID": APP_APPLE_ID,
            "SIM_NOTIFY_URL": f"http://127.0.0.1:{self.ingest_port}/v1/apple/notifications",
            "SIM_RETRY_SCALE": "3600", "SIM_NOTIFY_TIMEOUT_MS": "5000", "LOG_LEVEL": "warning",
        }, **self.overrides.get("sim", {})), lambda: http_ok(self.sim_port, "/sim/health"))
        self._add("ingest", [self._bin("ingest")], dict(base, **{
            "TOLLGATE_HTTP_HOST": "127.0.0.1", "TOLLGATE_HTTP_PORT": str(self.ingest_port),
            "TOLLGATE_CLIENT_JWT_SECRET": JWT_SECRET, "TOLLGATE_SERVICE_KEYS": SERVICE_KEY,
            "TOLLGATE_ROOT_CERTS": os.path.join(sim_dir, "root.der"),
        }, **self.overrides.get("ingest", {})), lambda: http_ok(self.ingest_port, "/readyz"))
        worker = dict(base, **{"TOLLGATE_METRICS_HOST": "127.0.0.1"})
        verifier = dict(worker, **{
            "TOLLGATE_BUNDLE_ID": BUNDLE_ID, "TOLLGATE_APP_APPLE_ID": APP_APPLE_ID,
            # A production deployment that accepts sandbox data (App Review): production receipts are the
            # normal traffic, the sandbox side of verifyReceipt carries the faults that never clear.
            "TOLLGATE_ENVIRONMENT": "production", "TOLLGATE_ACCEPT_SANDBOX": "true",
            "TOLLGATE_ROOT_CERTS": os.path.join(sim_dir, "root.der"),
            "TOLLGATE_VERIFY_RECEIPT_URL": f"{sim}/verifyReceipt",
            "TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL": f"{sim}/sandbox/verifyReceipt",
            "TOLLGATE_APPSTORE_API_URL": sim, "TOLLGATE_APPSTORE_API_SANDBOX_URL": f"{sim}/sandbox",
            "TOLLGATE_RETRY_BASE_MS": "200", "TOLLGATE_RETRY_CAP_MS": "2000", "TOLLGATE_RETRY_MAX_ATTEMPTS": "20",
            "TOLLGATE_APPLE_TIMEOUT_MS": "2000", "TOLLGATE_CLAIM_MIN_IDLE_MS": "6000",
            "TOLLGATE_CLAIM_INTERVAL_MS": "1000", "TOLLGATE_HEARTBEAT_MS": "1000",
            "TOLLGATE_VERIFIER_CONCURRENCY": "32",
        }, **self.overrides.get("verifier", {}))
        fulfiller = dict(worker, **{"TOLLGATE_CLAIM_MIN_IDLE_MS": "4000", "TOLLGATE_CLAIM_INTERVAL_MS": "1000"},
                         **self.overrides.get("fulfiller", {}))
        for i in range(2):
            port = free_port()
            self._add(f"verifier-{i}", [self._bin("verifier")], dict(verifier, TOLLGATE_METRICS_PORT=str(port)),
                      (lambda p: lambda: http_ok(p, "/healthz"))(port))
        for i in range(2):
            port = free_port()
            self._add(f"fulfiller-{i}", [self._bin("fulfiller")], dict(fulfiller, TOLLGATE_METRICS_PORT=str(port)),
                      (lambda p: lambda: http_ok(p, "/healthz"))(port))

    def _bin(self, name):
        return os.path.join(self.bin, name)

    def _add(self, name, argv, env, ready):
        self.services[name] = Service(name, argv, env, os.path.join(self.logs, f"{name}.log"), ready)

    @property
    def workers(self):
        return [n for n in self.services if n.startswith(("verifier", "fulfiller"))] + ["ingest"]

    def start_all(self, timeout=120):
        for name, service in self.services.items():
            service.start()
            if not service.wait_ready(timeout):
                raise RuntimeError(f"{name} did not come up within {timeout}s\n{service.tail()}")
        threading.Thread(target=self._supervise, name="supervisor", daemon=True).start()

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
                    if self.stopping.is_set() or service.down or service.alive():
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
