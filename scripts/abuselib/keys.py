"""Issue 31: the customer API's endpoints tried without a key, with a user's JWT, and with a read-only key on the
calls that change something (spend, grants, operators' Apple calls). Nothing may change for the user tried on."""

import http.client, json, time

from abuselib import bounded
from abuselib.floods import Tally

READ_KEY = "abuse-support-read-key-0123456789abcdefghij"
# Issue 42 item 3: a support tool's key that may look orders up at Apple (`lookup`), bounded per key.
LOOKUP_KEY = "abuse-support-lookup-key-0123456789abcdefgh"
# Its bounds in the run: 2 look-ups a second, a burst of 5, 4 unfinished.
LOOKUP_LIMITS = "support-apple=2/5/4"

# (method, path template, body, the scope it needs)
ENDPOINTS = [
    ("GET", "/v1/users/{user}", None, "read"),
    ("GET", "/v1/transactions/2000000000000001", None, "read"),
    ("GET", "/v1/lookup?originalTransactionId=2000000000000001", None, "read"),
    ("GET", "/v1/lookup?orderId=MABUSESCOPE1", None, "lookup"),
    ("POST", "/v1/users/{user}/coins/spend", {"amount": 1, "reason": "abuse", "idempotencyKey": "abuse-1"}, "spend"),
    ("POST", "/v1/users/{user}/grants", {"entitlement": "vip", "until": "2099-01-01T00:00:00Z", "reason": "abuse"}, "grant"),
    ("DELETE", "/v1/users/{user}/grants/g_0123456789abcdef", None, "grant"),
    ("POST", "/v1/admin/apple/extend", {"originalTransactionId": "2000000000000001", "days": 7}, "admin"),
    ("POST", "/v1/admin/apple/set-account-token", {"originalTransactionId": "2000000000000001", "userId": "{user}"}, "admin"),
]


def service_keys(bare_key):
    """TOLLGATE_SERVICE_KEYS for the run: the harness's bare key (every scope), a named read-only key and a named
    key that may look orders up at Apple."""
    return f"{bare_key},support:read:{READ_KEY},support-apple:lookup:{LOOKUP_KEY}"


def lookup_flood(port, key, running, rate=64.0, at_least=300):
    """Look-ups of new order ids with `key`, `rate` a second, while `running()` and at least `at_least` of them (a
    support tool gone wrong, or a stolen key): returns the tally of answers."""
    tally = Tally()
    sent, began = 0, time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        while running() or sent < at_least:
            pause = began + sent / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            conn.request("GET", f"/v1/lookup?orderId=MFLOOD{key[-6:]}{sent:06d}", headers={"X-Api-Key": key})
            response = conn.getresponse()
            raw = response.read()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            tally.add(response.status, parsed)
            sent += 1
    finally:
        conn.close()
    return tally


def attempts(http, user):
    """Every endpoint without a key, with the user's own JWT and with the read key; returns (tallies, the user as a
    read key saw it before and after)."""
    def call(method, path, body, headers):
        path = path.replace("{user}", user)
        if isinstance(body, dict):
            body = {k: (v.replace("{user}", user) if isinstance(v, str) else v) for k, v in body.items()}
        return http.once(method, path, body, headers)

    read = {"X-Api-Key": READ_KEY}
    before = http.once("GET", f"/v1/users/{user}", None, read)
    jwt = {"Authorization": f"Bearer {bounded.user_token(bounded.JWT_SECRET, user)}"}
    anonymous, as_user, read_on_writes = Tally(), Tally(), Tally()
    for method, path, body, scope in ENDPOINTS:
        anonymous.add(*call(method, path, body, {}))
        as_user.add(*call(method, path, body, jwt))
        if scope != "read":
            read_on_writes.add(*call(method, path, body, read))
    after = http.once("GET", f"/v1/users/{user}", None, read)
    return anonymous, as_user, read_on_writes, before, after


def unchanged(before, after):
    """The user's coins, entitlements, grants and last event seq are what they were."""
    (s1, a), (s2, b) = before, after
    fields = ("coins", "coinsGranted", "entitlements", "grants", "lastEventSeq")
    return s1 == s2 == 200 and all(a.get(f) == b.get(f) for f in fields), f"{ {f: b.get(f) for f in ('coins', 'lastEventSeq')} }"
