"""Issue 31: the customer API's endpoints tried without a key, with a user's JWT, and with a read-only key on the
calls that change something (spend, grants, operators' Apple calls). Nothing may change for the user tried on."""

from abuselib import bounded
from abuselib.floods import Tally

READ_KEY = "abuse-support-read-key-0123456789abcdefghij"

# (method, path template, body, the scope it needs)
ENDPOINTS = [
    ("GET", "/v1/users/{user}", None, "read"),
    ("GET", "/v1/transactions/2000000000000001", None, "read"),
    ("GET", "/v1/lookup?originalTransactionId=2000000000000001", None, "read"),
    ("POST", "/v1/users/{user}/coins/spend", {"amount": 1, "reason": "abuse", "idempotencyKey": "abuse-1"}, "spend"),
    ("POST", "/v1/users/{user}/grants", {"entitlement": "vip", "until": "2099-01-01T00:00:00Z", "reason": "abuse"}, "grant"),
    ("DELETE", "/v1/users/{user}/grants/g_0123456789abcdef", None, "grant"),
    ("POST", "/v1/admin/apple/extend", {"originalTransactionId": "2000000000000001", "days": 7}, "admin"),
    ("POST", "/v1/admin/apple/set-account-token", {"originalTransactionId": "2000000000000001", "userId": "{user}"}, "admin"),
]


def service_keys(bare_key):
    """TOLLGATE_SERVICE_KEYS for the run: the harness's bare key (every scope) and a named read-only key."""
    return f"{bare_key},support:read:{READ_KEY}"


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
