"""The trouble: SIGKILLs of workers, one redis-server kill and restart, and simulator faults.

Events are tied to the load's progress (the share of purchases done), not to the clock, so a slow machine
gets the same chaos as a fast one: kill i of K comes at progress (i+1)/(K+1), each Redis restart and each
fault at a seeded point in between.

On a Redis Cluster (`cluster.clustered`) the Redis restarts are replaced by primary kills (at 30 % and 70 % with
two: the primary serving the most partitions is SIGKILLed, its replica's promotion awaited, then the node is
restarted on its port and directory and rejoins as a replica) and one reshard at 50 % (1,500 slots from the
owner of slot 0 to another primary, by redis-cli, under load). Transient faults always end by themselves (`times`), so that only the
sandbox fault installed at the start never clears. Faults that hit every call are short (`times` 8 and 6
together stay below the verifier's 20 attempts), so no job can exhaust its retries on transient faults
alone, even when it is the only caller while they last.

With the exporters (`scripts/chaos --export`) each is SIGKILLed once more (at 30 % and 70 %, besides being among
the random kills' targets), and PostgreSQL is stopped once for 10-20 s at a seeded point between 35 % and 55 %, in a
thread of its own so the other events keep their places (chaoslib/export.py).
"""
import os, random, signal, subprocess, threading, time
from .layout import ClusterRedis, slot
from .net import Redis

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
    def __init__(self, cluster, sim, load, kills, redis_restarts, faults, seed, log, pauses=0, primary_kills=0,
                 reshard=False):
        self.cluster, self.sim, self.load = cluster, sim, load
        self.rng = random.Random(seed)
        self.log = log
        self.kills = []            # (name, seconds down)
        self.redis_restarts = 0
        self.primary_kills = []    # (node name, seconds to the replica's promotion, seconds to rejoin as a replica)
        self.reshards = []         # (from port, to port, slots moved, seconds)
        # A checker-side client made before the chaos: its slot map goes stale on every failover and reshard,
        # so its MOVED and refresh counters show those paths ran (the services export no such counters).
        self.probe = ClusterRedis(cluster.redis_ports) if cluster.clustered else None
        self.probe_moved = self.probe_refreshes = 0
        self.pauses = []           # (name, seconds stopped)
        self.pause_threads = []     # and the PostgreSQL outage's
        self.faults = []           # the fault bodies posted
        self.errors = []
        self.stop = threading.Event()
        self.schedule = self._schedule(kills, 0 if cluster.clustered else redis_restarts, faults, pauses)
        for i in range(primary_kills):
            self.schedule.append((0.3 + 0.4 * i / (primary_kills - 1) if primary_kills > 1 else 0.3, "primary", None))
        if reshard:
            self.schedule.append((0.5, "reshard", None))
        if cluster.postgres:
            # A generator of its own, so that the other events' draws are those of a run without --export.
            export_rng = random.Random(seed + 7)
            self.schedule += [(0.3, "kill", "exporter-0"), (0.7, "kill", "exporter-1"),
                              (export_rng.uniform(0.35, 0.55), "postgres", export_rng.uniform(10.0, 20.0))]
        self.schedule.sort(key=lambda e: e[0])
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
                elif what == "postgres":
                    from chaoslib import export
                    thread = threading.Thread(target=self._background, args=(what, export.outage,
                                                                             self.cluster, arg, self.log), daemon=True)
                    self.pause_threads.append(thread)
                    thread.start()
                elif what == "primary":
                    self._kill_primary()
                elif what == "reshard":
                    self._reshard()
                else:
                    self._post_fault(arg)
                    self.log(f"fault injected: {arg}")
            except Exception as error:  # keep going: the checks at the end tell what it did
                self.errors.append(f"{what} {arg}: {error}")
                self.log(f"chaos step failed: {what} {arg}: {error}")

    def _background(self, what, step, *args):
        try:
            step(*args)
        except Exception as error:
            self.errors.append(f"{what}: {error}")
            self.log(f"chaos step failed: {what}: {error}")

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

    # -- Redis Cluster -------------------------------------------------------------------------------

    def _live_ports(self):
        return [p for p in self.cluster.redis_ports if self.cluster.services[self.cluster.node_name(p)].alive()]

    def _primaries(self, port):
        """{port: node} of the primaries (not failed) as one node sees them."""
        return {n["port"]: n for n in self.cluster.cluster_nodes(port)
                if "master" in n["flags"] and "fail" not in n["flags"] and n["slots"]}

    def _owner(self, port, s):
        for p, node in self._primaries(port).items():
            if any(a <= s <= b for a, b in node["slots"]):
                return p, node
        return None, None

    def _wait(self, what, test, seconds):
        give_up = time.monotonic() + seconds
        while time.monotonic() < give_up:
            try:
                if test():
                    return True
            except (OSError, RuntimeError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"timed out after {seconds:.0f}s waiting for {what}")

    def _probe(self):
        """Reads every partition's jobs stream with the stale-mapped probe client; counts its redirects."""
        if not self.probe:
            return
        before_moved, before_refreshes = self.probe.moved, self.probe.refreshes
        for p in range(self.cluster.layout.n):
            self.probe.call("XLEN", self.cluster.layout.stream("jobs", p))
        self.probe_moved += self.probe.moved - before_moved
        self.probe_refreshes += self.probe.refreshes - before_refreshes

    def _kill_primary(self):
        layout = self.cluster.layout
        live = self._live_ports()
        counts = {}
        for tag in layout.tags:
            owner, _ = self._owner(live[0], slot(tag))
            counts[owner] = counts.get(owner, 0) + 1
        victim = max(sorted(counts), key=lambda p: counts[p])
        slots_of_victim = [slot(t) for t in layout.tags if self._owner(live[0], slot(t))[0] == victim]
        name = self.cluster.node_name(victim)
        others = [p for p in live if p != victim]
        began = time.monotonic()
        self.cluster.sigkill(name)
        self.log(f"SIGKILL primary {name} (:{victim}, {counts[victim]} of {layout.n} partitions); "
                 "waiting for its replica's promotion")

        def promoted():
            owners = {self._owner(others[0], s)[0] for s in slots_of_victim}
            return victim not in owners and None not in owners and self.cluster.cluster_ok(others)
        self._wait(f"a replica of :{victim} to be promoted", promoted, 60)
        promotion = time.monotonic() - began
        new_owner = self._owner(others[0], slots_of_victim[0])[0]
        self.log(f"replica :{new_owner} promoted after {promotion:.1f}s; restarting {name} on its port and nodes.conf")
        if not self.cluster.restart(name):
            raise RuntimeError(f"{name} did not come back after the primary kill")

        def rejoined():
            me = [n for n in self.cluster.cluster_nodes(victim) if "myself" in n["flags"]][0]
            return "slave" in me["flags"] and self.cluster.cluster_info(victim, "cluster_state") == "ok" \
                and self._replication_up(victim)
        self._wait(f"{name} to rejoin as a replica", rejoined, 90)
        rejoin = time.monotonic() - began
        self.primary_kills.append((name, promotion, rejoin))
        self.log(f"{name} rejoined as a replica of :{new_owner} ({rejoin:.1f}s after the kill)")
        self._probe()

    def _replication_up(self, port):
        redis = Redis(port, timeout=2)
        try:
            info = redis.call("INFO", "replication")
        finally:
            redis.close()
        return "master_link_status:up" in info

    def _reshard(self, count=1500):
        live = self._live_ports()

        def agreed():
            done = subprocess.run(["redis-cli", "--cluster", "check", f"127.0.0.1:{live[0]}"],
                                  capture_output=True, text=True, timeout=30)
            return done.returncode == 0 and "[ERR]" not in done.stdout
        self._wait("every node to agree on the configuration (redis-cli --cluster check)", agreed, 60)
        primaries = self._primaries(live[0])
        source, node = self._owner(live[0], 0)
        target = sorted(p for p in primaries if p != source)[0]
        log = os.path.join(self.cluster.root, "cluster", "reshard.log")
        self.log(f"reshard: {count} slots from :{source} (owner of slot 0) to :{target}, under load")
        began = time.monotonic()
        with open(log, "ab") as out:
            done = subprocess.run(["redis-cli", "--cluster", "reshard", f"127.0.0.1:{source}",
                                   "--cluster-from", node["id"], "--cluster-to", primaries[target]["id"],
                                   "--cluster-slots", str(count), "--cluster-pipeline", "100", "--cluster-yes"],
                                  stdout=out, stderr=subprocess.STDOUT, timeout=600)
        seconds = time.monotonic() - began
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster reshard exited {done.returncode}; see {log}")
        self.reshards.append((source, target, count, seconds))
        self.log(f"reshard done in {seconds:.1f}s")
        self._probe()
