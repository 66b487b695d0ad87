"""Failover stage (issue #36): Herald on PostgreSQL high availability, as operators run it.

Two PostgreSQL 15 members under Patroni 3 with one etcd (Debian's packages), synchronous
mode and pg_rewind; two Herald nodes on the multi-host URL
`postgres://…@P1,P2/herald?target_session_attrs=read-write`; a load of native logins and
session refreshes alternating between the nodes, a 503 retried after its `Retry-After`. Then a
planned switchover (`patronictl switchover`) and a SIGKILL of the new primary's postmaster.

Asserted:
- nothing acknowledged is lost: every session family whose last answer was 2xx still
  refreshes at the end, on both nodes, and no family ends otherwise;
- during the switchover every answer is 2xx: a transaction that lost its connection before
  COMMIT runs again on the new primary (item 1), and one that lost it after COMMIT was sent
  is answered with what it committed, read on the new primary (item 2);
- during the kill every answer is 2xx or 503 with `Retry-After` (never a retry refused as a
  replayed token or a reused refresh token);
- after the kill the answers are 2xx again within 15 s, and `/readyz` is 200 again on both nodes;
- the killed member rejoins as a replica (pg_rewind) within 60 s.

Reported (the figures docs/high-availability.md quotes): the answers, re-run transactions and
lost COMMITs resolved during the switchover, the gap after the kill, and the rejoin time.

Every process it starts it stops by its PID; all of it lives in one temporary folder."""
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Interop"))
import fakeapple  # noqa: E402 (after the path above)
import yaml  # noqa: E402

DOCUMENTED_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "ha", "patroni.yml")

PG_BIN = "/usr/lib/postgresql/15/bin"
REALM = "ha"
CLIENT = "ha-app"
AUDIENCE = "com.example.ha"
ROOT_OWNED = os.geteuid() == 0


def log(message):
    print(f"failover: {message}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Processes:
    """Every child this stage starts, stopped by PID (and its process group) at the end."""

    def __init__(self):
        self.children = []

    def start(self, name, argv, log_path, as_postgres=False, env=None):
        prefix = ["runuser", "-u", "postgres", "--"] if as_postgres and ROOT_OWNED else []
        out = open(log_path, "ab")
        process = subprocess.Popen(prefix + argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, start_new_session=True)
        self.children.append((name, process, out))
        return process

    def stop_all(self):
        for name, process, out in reversed(self.children):
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                    process.wait(timeout=15)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(process.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    process.wait()
            out.close()


def wait_for(what, predicate, timeout, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except OSError:
            pass
        time.sleep(interval)  # polling an external process's state
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


def request(port, method, path, body=None, headers=None, timeout=10):
    """One request on its own connection: (status, headers, parsed JSON or text)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        all_headers = dict(headers or {})
        if data is not None:
            all_headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=all_headers)
        response = connection.getresponse()
        raw = response.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, parsed
    finally:
        connection.close()


class Cluster:
    """etcd and two Patroni members."""

    def __init__(self, folder, processes):
        self.folder, self.processes = folder, processes
        self.etcd_port, etcd_peer = free_port(), free_port()
        self.members = {name: {"pg": free_port(), "rest": free_port()} for name in ("pg1", "pg2")}
        self.scope = "herald-failover"
        etcd_dir = os.path.join(folder, "etcd")
        self.processes.start("etcd", [
            "etcd", "--name", "e1", "--data-dir", etcd_dir,
            "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{etcd_peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{etcd_peer}",
            "--initial-cluster", f"e1=http://127.0.0.1:{etcd_peer}"], os.path.join(folder, "etcd.log"))
        wait_for("etcd", lambda: request(self.etcd_port, "GET", "/health")[0] == 200, 30)

    def config(self, name):
        """docs/ha/patroni.yml as an operator would deploy it, with this member's loopback
        addresses, temporary folders, trust on loopback and a test's shorter timings."""
        member = self.members[name]
        path = os.path.join(self.folder, f"{name}.yml")
        with open(DOCUMENTED_CONFIG) as f:
            config = yaml.safe_load(f)
        config.update(scope=self.scope, name=name, log={"level": "WARNING"},
                      restapi={"listen": f"127.0.0.1:{member['rest']}", "connect_address": f"127.0.0.1:{member['rest']}"},
                      etcd3={"hosts": f"127.0.0.1:{self.etcd_port}"})
        # Seconds instead of tens of seconds, so a test sees a failover quickly
        # (ttl ≥ loop_wait + 2 × retry_timeout, as Patroni requires).
        config["bootstrap"]["dcs"].update(ttl=20, loop_wait=1, retry_timeout=5)
        postgresql = config["postgresql"]
        postgresql.update(listen=f"127.0.0.1:{member['pg']}", connect_address=f"127.0.0.1:{member['pg']}",
                          data_dir=os.path.join(self.folder, name), bin_dir=PG_BIN,
                          pgpass=os.path.join(self.folder, f"{name}.pgpass"),
                          pg_hba=["local all all trust", "host replication all 127.0.0.1/32 trust",
                                  "host all all 127.0.0.1/32 trust"],
                          parameters={"unix_socket_directories": self.folder})
        with open(path, "w") as f:
            yaml.safe_dump(config, f)
        return path

    def start_member(self, name):
        self.members[name]["process"] = self.processes.start(
            name, ["patroni", self.config(name)], os.path.join(self.folder, f"{name}.log"), as_postgres=True)

    def role(self, name):
        """`primary`, `replica` or None (REST down)."""
        try:
            status, _, body = request(self.members[name]["rest"], "GET", "/patroni", timeout=2)
        except OSError:
            return None
        if status != 200 or not isinstance(body, dict) or body.get("state") != "running":
            return None
        return body.get("role")

    def primary(self):
        for name in self.members:
            if self.role(name) in ("primary", "master"):
                return name
        return None

    def sync_standby(self):
        """The member the primary replicates to synchronously, from Patroni's /cluster view."""
        for name in self.members:
            try:
                status, _, body = request(self.members[name]["rest"], "GET", "/cluster", timeout=2)
            except OSError:
                continue
            if status == 200 and isinstance(body, dict):
                for member in body.get("members", []):
                    if member.get("role") == "sync_standby" and member.get("state") in ("running", "streaming"):
                        return member.get("name")
        return None

    def psql(self, port, sql, database="postgres"):
        subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", database, "-q",
                        "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, stdout=subprocess.DEVNULL)

    def postmaster_pid(self, name):
        with open(os.path.join(self.folder, name, "postmaster.pid")) as f:
            return int(f.readline())

    def patronictl(self, *arguments):
        prefix = ["runuser", "-u", "postgres", "--"] if ROOT_OWNED else []
        return subprocess.run(prefix + ["patronictl", "-c", self.config("pg1"), *arguments], check=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60).stdout


class Herald:
    def __init__(self, binary, folder, name, database, apple_url, master_key, admin_token, processes):
        self.port = free_port()
        env = dict(os.environ, HERALD_MASTER_KEY=master_key, HERALD_ADMIN_TOKEN=admin_token,
                   HERALD_RATE_LIMIT_PER_IP="off", HERALD_RATE_LIMIT_PER_CLIENT="off")
        self.process = processes.start(name, [binary, "serve", "--port", str(self.port), "--database", database,
                                              "--apple-jwks-url", apple_url, "--public-url", "http://127.0.0.1:1"],
                                       os.path.join(folder, f"{name}.log"), env=env)
        self.log_path = os.path.join(folder, f"{name}.log")
        wait_for(f"{name} to serve", lambda: request(self.port, "GET", "/healthz")[0] == 200, 30)


class Load:
    """Session families driven on alternating nodes: a native login, then refreshes. Every
    answer is recorded with its time; a 503 is retried after `Retry-After` (capped at 2 s so
    the stage stays short); a 401 ends the family."""

    def __init__(self, nodes, apple, workers=6, pause=0.04):
        self.nodes, self.apple, self.workers, self.pause = nodes, apple, workers, pause
        self.answers = []  # (answered at, status, has Retry-After, kind, sent at)
        self.families = []  # dicts: refresh token, last status
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(index,), daemon=True) for index in range(workers)]

    def record(self, status, headers, kind, sent):
        with self.lock:
            self.answers.append((time.monotonic(), status, "retry-after" in headers, kind, sent))

    def call(self, node, method, path, body, kind):
        """Sends until an answer other than 503 (honouring Retry-After); the final answer."""
        while True:
            sent = time.monotonic()
            try:
                status, headers, parsed = request(node.port, method, path, body)
            except OSError:
                status, headers, parsed = 0, {}, None
            self.record(status, headers, kind, sent)
            if status != 503 or self.stopping.is_set():
                return status, parsed
            time.sleep(min(float(headers.get("retry-after", "1")), 2.0))  # the client's own back-off

    def run(self, index):
        step = 0
        while not self.stopping.is_set():
            node = self.nodes[(index + step) % len(self.nodes)]
            step += 1
            family = {"sub": f"{index}.{step}.{secrets.token_hex(4)}", "last": None}
            nonce = secrets.token_urlsafe(16)
            token = fakeapple.identity_token(self.apple.key, self.apple.kid, AUDIENCE, family["sub"], nonce,
                                             email=f"{family['sub']}@example.com")
            status, body = self.call(node, "POST", f"/api/oauth/{REALM}/apple/native-login",
                                        {"identityToken": token, "clientId": CLIENT, "nonce": nonce}, "login")
            if status != 200:
                continue
            family["refresh"] = body["refreshToken"]
            family["last"] = 200
            with self.lock:
                self.families.append(family)
            for _ in range(4):
                if self.stopping.is_set():
                    break
                time.sleep(self.pause)
                node = self.nodes[(index + step) % len(self.nodes)]
                step += 1
                status, body = self.call(node, "POST", f"/api/auth/{REALM}/session/refresh",
                                                  {"refreshToken": family["refresh"], "clientId": CLIENT}, "refresh")
                family["last"] = status
                if status != 200:
                    break
                family["refresh"] = body["refreshToken"]

    def start(self):
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)

    def between(self, start, end):
        with self.lock:
            return [answer for answer in self.answers if start <= answer[0] <= end]


def metric(nodes, name):
    """The sum over the nodes of one counter in their /metrics, all its labels together."""
    total = 0
    for node in nodes:
        _, _, text = request(node.port, "GET", "/metrics")
        for line in str(text).splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += int(float(line.split()[-1]))
    return total


class Counters:
    """The nodes' lost-connection counters over one phase."""
    NAMES = {"reruns": "herald_postgres_transactions_rerun_total",
             "resolved": "herald_postgres_lost_commits_resolved_total",
             "unknown": "herald_postgres_commit_outcome_unknown_total"}

    def __init__(self, nodes):
        self.nodes = nodes
        self.before = {key: metric(nodes, name) for key, name in self.NAMES.items()}

    def since(self):
        return {key: metric(self.nodes, name) - self.before[key] for key, name in self.NAMES.items()}


def classify(answers):
    """(503s with Retry-After, and every answer that is neither 2xx nor one of those — a retry
    refused after a 503 among them)."""
    unavailable = [a for a in answers if a[1] == 503 and a[2]]
    bad = [a for a in answers if not (200 <= a[1] < 300 or (a[1] == 503 and a[2]))]
    return unavailable, bad


def main():
    binary = os.environ["HERALD_BIN"]
    folder = tempfile.mkdtemp(prefix="herald-failover-")
    if ROOT_OWNED:
        shutil.chown(folder, "postgres", "postgres")
    processes = Processes()
    apple = fakeapple.FakeApple("ha-key")
    failures = []
    try:
        started = time.monotonic()
        cluster = Cluster(folder, processes)
        cluster.start_member("pg1")
        wait_for("pg1 to lead", lambda: cluster.role("pg1") in ("primary", "master"), 60)
        cluster.start_member("pg2")
        wait_for("pg2 to stream synchronously", lambda: cluster.sync_standby() == "pg2", 90)
        pg1, pg2 = cluster.members["pg1"]["pg"], cluster.members["pg2"]["pg"]
        cluster.psql(pg1, "CREATE DATABASE herald")
        log(f"Patroni cluster up ({time.monotonic() - started:.1f} s)")

        url = (f"postgres://postgres@127.0.0.1:{pg1},127.0.0.1:{pg2}/herald"
               "?target_session_attrs=read-write&connect_timeout=2")
        master_key, admin_token = secrets.token_hex(32), secrets.token_urlsafe(32)
        nodes = [Herald(binary, folder, f"herald{index}", url, apple.url, master_key, admin_token, processes)
                 for index in (1, 2)]
        admin = {"Authorization": f"Bearer {admin_token}"}
        for method, path, body in [
            ("POST", "/api/admin/realms", {"id": REALM, "rateLimit": {"failuresPerWindow": 100000, "windowSeconds": 60}}),
            ("PUT", f"/api/admin/realms/{REALM}/providers/apple", {"enabled": True, "clientId": "com.example.ha.web",
                                                                   "audiences": [AUDIENCE]}),
            ("POST", f"/api/admin/realms/{REALM}/clients", {"clientId": CLIENT, "name": "HA app", "firstParty": True}),
        ]:
            status, _, answer = request(nodes[0].port, method, path, body, headers=admin)
            if status not in (200, 201):
                raise RuntimeError(f"{method} {path}: {status} {answer}")

        load = Load(nodes, apple)
        load.start()
        time.sleep(5)  # steady load before the switchover

        # 1. A planned switchover to the synchronous standby.
        counters = Counters(nodes)
        switch_start = time.monotonic()
        cluster.patronictl("switchover", cluster.scope, "--leader", "pg1", "--candidate", "pg2", "--force")
        wait_for("pg2 to lead", lambda: cluster.primary() == "pg2", 60)
        wait_for("pg1 to rejoin as sync standby", lambda: cluster.sync_standby() == "pg1", 90)
        time.sleep(3)  # answers in flight at the switch settle
        switch_end = time.monotonic()
        during = load.between(switch_start, switch_end)
        unavailable, bad = classify(during)
        seen = counters.since()
        log(f"switchover: {len(during)} answers, {len(unavailable)} × 503, {len(bad)} other non-2xx;"
            f" {seen['reruns']} transactions run again on the new primary, {seen['resolved']} lost COMMITs"
            f" resolved by reading it, {seen['unknown']} left unknown ({switch_end - switch_start:.1f} s)")
        # Items 1 and 2: a planned switchover costs clients a wait, never an error.
        if unavailable or bad:
            failures.append(f"switchover: non-2xx answers: {sorted({(a[1], a[3]) for a in unavailable + bad})}")

        time.sleep(3)
        # 2. SIGKILL of the primary's postmaster.
        victim = cluster.primary()
        counters = Counters(nodes)
        kill_time = time.monotonic()
        os.kill(cluster.postmaster_pid(victim), signal.SIGKILL)
        survivor = "pg1" if victim == "pg2" else "pg2"
        wait_for(f"{survivor} to lead", lambda: cluster.primary() == survivor, 60)

        def recovered():
            """When answers came back: the first of five refreshes sent after the kill and
            answered 2xx (a request may wait in Herald while it reconnects); None before."""
            since = load.between(kill_time, time.monotonic())
            after = sorted(a[0] for a in since if a[4] >= kill_time and 200 <= a[1] < 300 and a[3] == "refresh")
            return after[0] if len(after) >= 5 else None
        recovery = wait_for("2xx again after the kill", recovered, 30) - kill_time
        wait_for("both nodes ready", lambda: all(request(node.port, "GET", "/readyz")[0] == 200 for node in nodes), 30)
        wait_for(f"{victim} to rejoin as a replica", lambda: cluster.role(victim) == "replica", 60, 0.5)
        rejoin_time = time.monotonic() - kill_time
        time.sleep(3)
        kill_end = time.monotonic()
        during = load.between(kill_time, kill_end)
        unavailable, bad = classify(during)
        seen = counters.since()
        log(f"kill of {victim}'s postmaster: 2xx again after {recovery:.1f} s, {len(unavailable)} × 503 with"
            f" Retry-After, {len(bad)} other non-2xx; {seen['reruns']} transactions run again, {seen['resolved']}"
            f" lost COMMITs resolved, {seen['unknown']} left unknown; {victim} rejoined as a replica after"
            f" {rejoin_time:.1f} s")
        if bad:
            failures.append(f"kill: other answers: {sorted({(a[1], a[3]) for a in bad})}")
        if recovery > 15:
            failures.append(f"kill: 2xx again only after {recovery:.1f} s (at most 15 s)")

        load.stop()
        # Nothing acknowledged lost: the newest refresh token of every family whose last answer
        # was 2xx still works, alternating nodes.
        kept = [family for family in load.families if family["last"] == 200]
        ended = [family for family in load.families if family["last"] not in (200, None)]
        lost = 0
        for index, family in enumerate(kept):
            status, _, _ = request(nodes[index % 2].port, "POST", f"/api/auth/{REALM}/session/refresh",
                                {"refreshToken": family["refresh"], "clientId": CLIENT})
            lost += status != 200
        log(f"families: {len(load.families)}, {len(kept)} acknowledged and checked, {lost} lost, {len(ended)} ended"
            f" by a refusal; {len(load.answers)} answers in all")
        if lost:
            failures.append(f"{lost} acknowledged session families no longer refresh")
        if ended:
            failures.append(f"{len(ended)} families ended by a refusal {sorted({family['last'] for family in ended})}")
        if not kept:
            failures.append("no family was acknowledged: the load did not run")
        log(f"took {time.monotonic() - started:.1f} s")
    except Exception as error:  # the stage reports any failure as one line, then cleans up
        failures.append(f"{type(error).__name__}: {error}")
    finally:
        apple.stop()
        processes.stop_all()
        if failures:
            for name in ("herald1", "herald2", "pg1", "pg2"):
                path = os.path.join(folder, f"{name}.log")
                if os.path.exists(path):
                    with open(path, errors="replace") as f:
                        tail = f.readlines()[-8:]
                    log(f"--- last lines of {name}.log ---\n" + "".join(tail))
        shutil.rmtree(folder, ignore_errors=True)
    if failures:
        for failure in failures:
            log(f"FAILED: {failure}")
        sys.exit(1)
    log("passed")


if __name__ == "__main__":
    main()
