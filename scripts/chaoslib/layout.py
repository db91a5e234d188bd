"""Tollgate's partition layout and key names, and a small slot-routing Redis Cluster client, for the scripts
(chaos, abuse, benchmarks). Mirrors Shared/Pipeline/PartitionLayout.swift and Keys: one partition keeps the
layout-1 names ({p0}, {u:<id>}, {otx:<id>}); N partitions use range-aligned tags ({p0.41}, {p1.42}, ...)."""
import time
from .net import Redis

SLOTS = 16384


def crc16(data):
    """CRC16/XMODEM, Redis Cluster's key hash; crc16(b"123456789") == 0x31C3."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def slot(key):
    """The cluster slot of a key (its hash tag when it has a non-empty one)."""
    raw = key.encode() if isinstance(key, str) else key
    start = raw.find(b"{")
    if start >= 0:
        end = raw.find(b"}", start + 1)
        if end > start + 1:
            raw = raw[start + 1:end]
    return crc16(raw) % SLOTS


class Layout:
    """Partition tags and key names under a prefix."""

    def __init__(self, partitions=1, prefix="tg"):
        self.n, self.prefix = partitions, prefix
        self.tags = [self._tag(k) for k in range(partitions)]

    def _tag(self, k):
        if self.n == 1:
            return "{p0}"
        low, high = k * SLOTS // self.n, (k + 1) * SLOTS // self.n
        suffix = 0
        while True:
            name = f"p{k}" if suffix == 0 else f"p{k}.{suffix}"
            if low <= slot(name) < high:
                return "{" + name + "}"
            suffix += 1

    def user_partition(self, user):
        return 0 if self.n == 1 else crc16(user.encode()) % self.n

    def chain_partition(self, otid):
        return 0 if self.n == 1 else crc16(otid.encode()) % self.n

    def key(self, partition, *parts):
        return ":".join([self.prefix, self.tags[partition]] + list(parts))

    def stream(self, name, partition):
        return self.key(partition, name)

    def user_tag(self, user):
        return "{u:%s}" % user if self.n == 1 else f"{self.tags[self.user_partition(user)]}:u:{user}"

    def user_key(self, user, *parts, side=None):
        """A user-ledger key; `side="sandbox"`: the user's sandbox side (`sbx` after the tag, LedgerSide.swift)."""
        return ":".join([self.prefix, self.user_tag(user)] + (["sbx"] if side == "sandbox" else []) + list(parts))

    def chain_key(self, otid, *parts):
        tag = "{otx:%s}" % otid if self.n == 1 else f"{self.tags[self.chain_partition(otid)]}:otx:{otid}"
        return ":".join([self.prefix, tag] + list(parts))

    def job_partition(self, job_id):
        """The partition a job id names (its first 4 hex digits with N > 1)."""
        if self.n == 1:
            return 0
        try:
            p = int(job_id[:4], 16)
        except ValueError:
            return 0
        return p if p < self.n else 0

    def partition_of_tag(self, key):
        """The partition whose tag a key carries (None for a key of no partition, e.g. a user key with N=1)."""
        start, end = key.find("{"), key.find("}")
        tag = key[start:end + 1] if 0 <= start < end else None
        return self.tags.index(tag) if tag in self.tags else None

    def job_pattern(self):
        return f"{self.prefix}:{{p*}}:job:*"

    def tx_pattern(self):
        """Every user's transaction records, of either side (`tg:{u:<id>}:tx:<tid>`, `tg:{u:<id>}:sbx:tx:<tid>`,
        `tg:{pK}:u:<id>:tx:<tid>`)."""
        return f"{self.prefix}:{{u:*:tx:*" if self.n == 1 else f"{self.prefix}:{{p*}}:u:*:tx:*"

    def user_of_tx(self, key):
        head, sep, _ = key.rpartition(":tx:")
        return self.user_of_account(head + ":account") if sep else None

    def account_pattern(self):
        return f"{self.prefix}:{{u:*}}:account" if self.n == 1 else f"{self.prefix}:{{p*}}:u:*:account"

    def user_of_account(self, key):
        """The user of an account key of either side."""
        if key.endswith(":sbx:account"):
            key = key[:-len(":sbx:account")] + ":account"
        if self.n == 1:
            head = f"{self.prefix}:{{u:"
            return key[len(head):-len("}:account")] if key.startswith(head) and key.endswith("}:account") else None
        marker = key.find("}:u:")
        return key[marker + 4:-len(":account")] if marker > 0 and key.endswith(":account") else None


class ClusterRedis:
    """Routes each command to the primary of its key's slot (the key is the command's second argument; keyless
    commands go to any primary), refreshing the slot map on MOVED or a lost node. Not thread-safe."""

    def __init__(self, ports, timeout=10):
        self.seeds, self.timeout = list(ports), timeout
        self.nodes, self.map = {}, [None] * SLOTS
        self.moved = 0       # MOVED replies followed
        self.refreshes = 0   # slot-map refreshes after a redirect or a lost node (a failover)
        self.refresh()

    def _node(self, port):
        if port not in self.nodes:
            self.nodes[port] = Redis(port, timeout=self.timeout)
        return self.nodes[port]

    def _drop(self, port):
        node = self.nodes.pop(port, None)
        if node:
            try:
                node.close()
            except OSError:
                pass

    def refresh(self):
        last = None
        for port in list(self.nodes) + self.seeds:
            try:
                ranges = self._node(port).call("CLUSTER", "SLOTS")
            except (OSError, RuntimeError, ConnectionError) as error:
                last = error
                self._drop(port)
                continue
            for start, end, primary, *_ in ranges:
                for s in range(int(start), int(end) + 1):
                    self.map[s] = int(primary[1])
            return
        raise ConnectionError(f"no cluster node answers CLUSTER SLOTS: {last}")

    def _try_refresh(self):
        self.refreshes += 1
        try:
            self.refresh()
        except ConnectionError:
            pass  # every node we know is down for now: the next attempt asks again

    def primaries(self):
        return sorted({p for p in self.map if p is not None})

    def _port(self, args):
        if len(args) > 1 and args[0].upper() not in ("PING", "INFO", "FUNCTION", "CLUSTER", "SCAN"):
            key = args[1]
            if args[0].upper() in ("XINFO", "XGROUP") and len(args) > 2:
                key = args[2]
            port = self.map[slot(str(key))]
            if port is not None:
                return port
        return self.primaries()[0]

    def call(self, *args, port=None):
        for attempt in range(8):
            target = port or self._port(args)
            try:
                return self._node(target).call(*args)
            except RuntimeError as error:
                text = str(error)
                if text.startswith(("MOVED", "TRYAGAIN", "CLUSTERDOWN", "LOADING")) and port is None:
                    self.moved += text.startswith("MOVED")
                    time.sleep(0.05 * attempt)
                    self._try_refresh()
                    continue
                raise
            except (OSError, ConnectionError):
                self._drop(target)
                time.sleep(0.2 * (attempt + 1))
                self._try_refresh()
        raise ConnectionError(f"gave up on {args[0]} after redirects")

    def pipeline(self, commands):
        """Each command routed on its own (in order); fine for scripts' checks."""
        return [self.call(*c) for c in commands]

    def scan(self, pattern, count=1000):
        for port in self.primaries():
            cursor = "0"
            while True:
                cursor, keys = self.call("SCAN", cursor, "MATCH", pattern, "COUNT", count, port=port)
                yield from keys
                if cursor == "0":
                    break

    def close(self):
        for port in list(self.nodes):
            self._drop(port)
