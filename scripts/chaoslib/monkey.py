"""The trouble: SIGKILLs of workers, one redis-server kill and restart, and simulator faults.

Events are tied to the load's progress (the share of purchases done), not to the clock, so a slow machine
gets the same chaos as a fast one: kill i of K comes at progress (i+1)/(K+1), each Redis restart and each
fault at a seeded point in between. Transient faults always end by themselves (`times`), so that only the
sandbox fault installed at the start never clears. Faults that hit every call are short (`times` 8 and 6
together stay below the verifier's 20 attempts), so no job can exhaust its retries on transient faults
alone, even when it is the only caller while they last.
"""
import random, signal, threading, time

# Installed before the load; never removed. Only the doomed (sandbox) receipts reach the sandbox endpoint.
PERMANENT_FAULT = {"target": "verifyReceipt", "status": 21005, "environment": "Sandbox"}

TRANSIENT_FAULTS = [
    {"target": "verifyReceipt", "status": 21005, "times": 8, "environment": "Production"},
    {"target": "notifications", "status": 500, "times": 15},
    {"target": "verifyReceipt", "status": 503, "rate": 0.2, "times": 60, "environment": "Production"},
    {"target": "verifyReceipt", "delayMs": 3000, "times": 6, "environment": "Production"},  # client timeouts
    {"target": "verifyReceipt", "status": 21009, "rate": 0.3, "times": 30, "environment": "Production"},
    {"target": "notifications", "delayMs": 6000, "times": 4},  # past the simulator's 5 s send timeout
    {"target": "verifyReceipt", "delayMs": 400, "rate": 0.5, "times": 80, "environment": "Production"},
]


class Monkey:
    def __init__(self, cluster, sim, load, kills, redis_restarts, faults, seed, log, pauses=0):
        self.cluster, self.sim, self.load = cluster, sim, load
        self.rng = random.Random(seed)
        self.log = log
        self.kills = []            # (name, seconds down)
        self.redis_restarts = 0
        self.pauses = []           # (name, seconds stopped)
        self.pause_threads = []
        self.faults = []           # the fault bodies posted
        self.errors = []
        self.stop = threading.Event()
        self.schedule = self._schedule(kills, redis_restarts, faults, pauses)
        self.thread = threading.Thread(target=self._run, name="monkey", daemon=True)

    def _schedule(self, kills, redis_restarts, faults, pauses):
        events = []
        targets = self.cluster.workers
        # The first kills cover each kind of worker once, the rest are random.
        kinds = ["verifier-0", "fulfiller-1", "ingest", "verifier-1", "fulfiller-0"]
        for i in range(kills):
            target = kinds[i] if i < len(kinds) else self.rng.choice(targets)
            events.append(((i + 1) / (kills + 1), "kill", target))
        for i in range(redis_restarts):
            events.append((self.rng.uniform(0.35, 0.65) if redis_restarts == 1 else (i + 0.5) / redis_restarts,
                           "redis", None))
        for i in range(faults):
            events.append((self.rng.uniform(0.05, 0.9), "fault", TRANSIENT_FAULTS[i % len(TRANSIENT_FAULTS)]))
        for i in range(pauses):
            replicas = [n for n in targets if n != "ingest"]
            events.append(((i + 0.5) / pauses, "pause", replicas[i % len(replicas)]))
        events.sort(key=lambda e: e[0])
        return events

    def install_permanent_fault(self):
        self._post_fault(PERMANENT_FAULT)

    def _post_fault(self, body):
        status, answer = self.sim.request("POST", "/sim/faults", body, deadline=30)
        if status != 201:
            raise RuntimeError(f"/sim/faults refused {body}: {status} {answer}")
        self.faults.append(body)

    def start(self):
        self.thread.start()

    def join(self):
        self.stop.set()
        self.thread.join()
        for thread in self.pause_threads:
            thread.join()

    def _run(self):
        pending = list(self.schedule)
        while pending:
            if self.stop.is_set():
                # The load finished before every event fired (progress never reached the last point):
                # fire the rest now so the run always has the chaos it promised.
                pass
            elif self.load.progress() < pending[0][0]:
                time.sleep(0.05)
                continue
            _, what, arg = pending.pop(0)
            if what == "fault" and self.stop.is_set():
                # With the load over, a fault limited by `times` would fall on the few jobs still
                # retrying and could exhaust one job's attempts: it is a fault only during the load.
                self.log(f"fault skipped (the load is over): {arg}")
                continue
            try:
                if what == "kill":
                    self._kill(arg)
                elif what == "pause":
                    thread = threading.Thread(target=self._pause, args=(arg,), daemon=True)
                    self.pause_threads.append(thread)
                    thread.start()
                elif what == "redis":
                    self._restart_redis()
                else:
                    self._post_fault(arg)
                    self.log(f"fault injected: {arg}")
            except Exception as error:  # keep going: the checks at the end tell what it did
                self.errors.append(f"{what} {arg}: {error}")
                self.log(f"chaos step failed: {what} {arg}: {error}")

    def _kill(self, name):
        self.cluster.sigkill(name)
        down = self.rng.uniform(0.2, 2.0)
        self.log(f"SIGKILL {name}; restarting in {down:.1f}s")
        time.sleep(down)
        if not self.cluster.restart(name):
            self.errors.append(f"{name} did not come back after a kill")
        self.kills.append((name, down))

    def _pause(self, name):
        """SIGSTOP a replica past its reclaim idle time, then SIGCONT: its entries are taken over by the
        other replica while it sleeps, and it wakes up holding work that is no longer its own."""
        service = self.cluster.services[name]
        proc = service.proc
        idle = int(service.env.get("TOLLGATE_CLAIM_MIN_IDLE_MS", "6000")) / 1000
        stopped = idle + self.rng.uniform(1.0, 3.0)
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGSTOP)
        self.log(f"SIGSTOP {name} for {stopped:.1f}s (reclaim after {idle:.0f}s idle)")
        time.sleep(stopped)
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
        self.pauses.append((name, stopped))

    def _restart_redis(self):
        self.cluster.sigkill("redis")
        down = self.rng.uniform(0.5, 2.0)
        self.log(f"SIGKILL redis-server; restarting in {down:.1f}s on the same port and data directory")
        time.sleep(down)
        if not self.cluster.restart("redis"):
            raise RuntimeError("redis-server did not come back")
        self.redis_restarts += 1
        self.log("redis-server is back (AOF loaded)")
