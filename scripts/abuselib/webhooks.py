"""The webhook replay attack (issue 42 item 4) against scripts/webhook-receiver, the sample receiver.

A request the notifier's code signed (`tollctl webhooks test`, captured on its way by a listener standing in for the
endpoint) is sent again to the receiver with a new `Tollgate-Event-Id` — the header is not signed — and to a second
endpoint that shares the secret. The receiver must take the first as a duplicate of the event it has (it
deduplicates on the signed body's `id`) and the second endpoint must refuse it 401 (the `v2=` signature covers the
endpoint's name). Python standard library only.
"""
import http.client, http.server, os, re, signal, subprocess, threading, time

from chaoslib.net import free_port

SECRET = "whsec_abuse_replay_0123456789abcdefghijkl"


def _capture_one(port, captured):
    """Answers one POST with 204 and keeps its headers and body in `captured`."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            captured["headers"] = {k: v for k, v in self.headers.items()}
            captured["body"] = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.HTTPServer(("127.0.0.1", port), Handler)
    server.timeout = 30
    threading.Thread(target=server.handle_request, daemon=True).start()
    return server


def _post(port, headers, body):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        names = ("Content-Type", "Tollgate-Event-Id", "Tollgate-Signature")
        connection.request("POST", "/hook", body=body, headers={k: v for k, v in headers.items() if k in names})
        return connection.getresponse().status
    finally:
        connection.close()


def _receiver(repo, port, endpoint, out):
    process = subprocess.Popen(
        ["python3", os.path.join(repo, "scripts", "webhook-receiver"), "--port", str(port), "--endpoint", endpoint,
         "--secret", SECRET], stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(out.name) as text:
                if "listening" in text.read():
                    return process
        except OSError:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"webhook-receiver did not listen on {port}")


def replay(repo, binaries, root):
    """Runs the attack; returns (replay taken as a duplicate, refused at the other endpoint, detail)."""
    capture_port, own_port, other_port = free_port(), free_port(), free_port()
    captured = {}
    server = _capture_one(capture_port, captured)
    environment = {"PATH": os.environ.get("PATH", ""), "TOLLGATE_WEBHOOK_URL": f"http://127.0.0.1:{capture_port}/hook",
                   "TOLLGATE_WEBHOOK_SECRETS": SECRET}
    sent = subprocess.run([os.path.join(binaries, "tollctl"), "webhooks", "test"], env=environment,
                          capture_output=True, text=True, timeout=60)
    server.server_close()
    if sent.returncode != 0 or "body" not in captured:
        return False, False, f"no request captured: tollctl webhooks test exited {sent.returncode}: {sent.stdout[-300:]}"
    outputs = [open(os.path.join(root, f"replay-receiver-{name}.log"), "w") for name in ("own", "other")]
    own = _receiver(repo, own_port, "default", outputs[0])
    other = _receiver(repo, other_port, "other", outputs[1])
    try:
        first = _post(own_port, captured["headers"], captured["body"])
        replayed = dict(captured["headers"], **{"Tollgate-Event-Id": "evt_replayed_with_a_new_header"})
        again = _post(own_port, replayed, captured["body"])
        elsewhere = _post(other_port, captured["headers"], captured["body"])
    finally:
        for process in (own, other):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=10)
        for out in outputs:
            out.close()
    with open(outputs[0].name) as text:
        summary = text.read()
    counts = dict((k, int(v)) for k, v in re.findall(r"(accepted|duplicates|rejected)=(\d+)", summary))
    duplicate = first == 204 and again == 204 and counts.get("accepted") == 1 and counts.get("duplicates") == 1
    detail = (f"original {first}, replay with a new Tollgate-Event-Id {again} (receiver: accepted="
              f"{counts.get('accepted')} duplicates={counts.get('duplicates')}); at another endpoint sharing the "
              f"secret {elsewhere}")
    return duplicate, elsewhere == 401, detail
