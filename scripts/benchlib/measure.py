"""Measuring helpers for the benchmarks: parallel keep-alive clients, wrk references, percentiles, CPU."""
import http.client, os, resource, subprocess, threading, time


def request(conn, method, path, body=None, headers=None):
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    return response.status, response.read()


def cpu_seconds(pid):
    """User + system CPU seconds of a running process (and its waited-for children)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def context_switches(pid):
    """Voluntary + involuntary context switches of a running process, summed over its threads."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                total += sum(int(line.split()[1]) for line in f if "ctxt_switches:" in line)
        except (OSError, ValueError, IndexError):
            pass
    return total


def run_parallel(count, concurrency, port, work):
    """Calls work(conn, i) for i in 0..<count on `concurrency` threads with a keep-alive connection each;
    returns (seconds, results, client CPU seconds)."""
    results = [None] * count
    lock = threading.Lock()
    next_index = [0]

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= count:
                break
            try:
                results[i] = work(conn, i)
            except (OSError, http.client.HTTPException) as error:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                results[i] = ("error", str(error), 0.0)
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    cpu0, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds, cpu1 = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
    return seconds, results, (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)


VERIFY_RECEIPT_LUA = """
local receipts = {}
for line in io.lines("%s") do receipts[#receipts + 1] = '{"receipt-data":"' .. line .. '"}' end
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/verifyReceipt", {["Content-Type"] = "application/json"}, receipts[(n %% #receipts) + 1])
end
"""


def wrk(port, path, connections, seconds, lua, directory):
    """Requests per second of wrk on 127.0.0.1:port/path (with a Lua script if given)."""
    argv = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{seconds}s"]
    if lua:
        script = os.path.join(directory, "ref.lua")
        with open(script, "w") as f:
            f.write(lua)
        argv += ["-s", script]
    out = subprocess.run(argv + [f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    raise RuntimeError(f"wrk printed no rate: {out[-300:]}")


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, max(0, int(round(p / 100 * len(sorted_values))) - 1))]
