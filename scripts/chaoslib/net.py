"""HTTP and Redis clients for the chaos run: Python standard library only.

`Http` behaves like a mobile app's networking layer: a request that met a connection error, a timeout or
a 502/503/504/429 is sent again with the same body after a short backoff, until a deadline. `Redis` is a
minimal RESP client for the end-of-run checks (XPENDING, ZCARD, SCAN of job statuses).
"""
import base64, hashlib, hmac, http.client, json, socket, threading, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def user_token(secret, user, lifetime=12 * 3600):
    """An HS256 user JWT (sub = user id) as the app's own auth server would issue it."""
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = b64(json.dumps({"sub": user, "exp": int(time.time()) + lifetime}, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


def jws_payload(jws):
    """The decoded payload of a compact JWS (no verification: the script only reads its own purchases)."""
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


class GaveUp(Exception):
    """A request still failed (connection error or retryable status) at its deadline."""


RETRYABLE = {429, 502, 503, 504}


class Http:
    """Per-thread keep-alive connections to one host; `request` retries like an app."""

    def __init__(self, port, stats=None):
        self.port = port
        self.local = threading.local()
        self.stats = stats

    def _connection(self):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=35)
            self.local.conn = conn
        return conn

    def _drop(self):
        conn = getattr(self.local, "conn", None)
        if conn is not None:
            conn.close()
        self.local.conn = None

    def once(self, method, path, body=None, headers=None):
        """One attempt: (status, parsed JSON or text). Raises OSError/HTTPException on connection trouble."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        conn = self._connection()
        try:
            conn.request(method, path, body=data, headers=h)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            self._drop()
            raise
        if response.getheader("Connection", "").lower() == "close":
            self._drop()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return response.status, parsed

    def request(self, method, path, body=None, headers=None, deadline=180.0, retry_statuses=RETRYABLE):
        """Sends until a non-retryable answer; the same body every time (ingest dedupes it)."""
        give_up = time.monotonic() + deadline
        delay, attempt = 0.1, 0
        while True:
            attempt += 1
            try:
                status, parsed = self.once(method, path, body, headers)
                if status not in retry_statuses:
                    if attempt > 1 and self.stats is not None:
                        self.stats.add("client_retries", attempt - 1)
                    return status, parsed
                problem = f"HTTP {status}"
            except (OSError, http.client.HTTPException) as error:
                problem = f"{type(error).__name__}: {error}"
            if time.monotonic() + delay > give_up:
                raise GaveUp(f"{method} {path} on :{self.port}: still failing after {attempt} attempts ({problem})")
            time.sleep(delay)
            delay = min(2.0, delay * 2)


class Redis:
    """A minimal RESP2 client (one connection, not thread-safe)."""

    def __init__(self, port, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("redis closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b":":
            return int(rest)
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode(errors="replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RuntimeError(f"unexpected RESP line {line[:40]!r}")

    @staticmethod
    def _encode(args):
        out = [b"*%d\r\n" % len(args)]
        for arg in args:
            b = arg if isinstance(arg, bytes) else str(arg).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        return b"".join(out)

    def call(self, *args):
        self.sock.sendall(self._encode(args))
        return self._reply()

    def pipeline(self, commands):
        self.sock.sendall(b"".join(self._encode(c) for c in commands))
        return [self._reply() for _ in commands]

    def scan(self, pattern, count=1000):
        cursor = "0"
        while True:
            cursor, keys = self.call("SCAN", cursor, "MATCH", pattern, "COUNT", count)
            yield from keys
            if cursor == "0":
                return
