#!/usr/bin/env python3
"""Herald end-to-end benchmark: native login (returning and new users), refresh, the full
third-party flow, and the HTTP ceiling (/healthz, /jwks.json), against the release binary.

A fake Apple (RSA key + JWKS on loopback) mints identity tokens with unique nonces, since the
server refuses replays; wrk posts them from pre-built body files (bodies.lua), each body once.
Results are printed as a table with the targets and appended to bench/RESULTS.md.

Usage: bench/scenarios/run.py --herald .build/release/herald [--quick] [--scale 1000,1000000]
"""
import argparse
import concurrent.futures
import hashlib
import http.client
import itertools
import json
import multiprocessing
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

from cryptography.hazmat.primitives import serialization

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The fake Apple is shared with the interop stage; a path entry rather than a package, as
# neither is installed.
sys.path.insert(0, os.path.join(ROOT, "Tests", "Interop"))
import fakeapple  # noqa: E402
from fakeapple import b64url  # noqa: E402

REALM = "bench"
APPLE_SERVICES_ID = "com.example.bench.web"
APPLE_BUNDLE_ID = "com.example.bench.ios"
FIRST_PARTY = "ios-app"
THIRD_PARTY = "backend"
REDIRECT = "https://backend.example/callback"
KID = "bench-rsa-1"


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Fake Apple: the interop stage's (key, JWKS server, token signing), with tokens minted in worker
# processes (RSA signing is the cost).

_SIGNING_KEY = None


def _init_minter(pem):
    global _SIGNING_KEY
    # The harness's SIGTERM handler (inherited through fork) would make pool.terminate()
    # print a KeyboardInterrupt traceback per worker.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _SIGNING_KEY = serialization.load_pem_private_key(pem, password=None)


def _mint(job):
    """One identity token for (sub, email); returns (token, raw nonce)."""
    sub, email = job
    raw_nonce = secrets.token_urlsafe(24)
    token = fakeapple.identity_token(_SIGNING_KEY, KID, APPLE_BUNDLE_ID, sub, raw_nonce, email=email,
                                     email_verified="true", lifetime=3600)
    return token, raw_nonce


class FakeApple(fakeapple.FakeApple):
    """The shared fake Apple, with worker processes that mint tokens in bulk."""

    def __init__(self):
        super().__init__(kid=KID)
        self.pool = multiprocessing.Pool(os.cpu_count() or 2, initializer=_init_minter, initargs=(self.private_pem(),))

    def mint(self, jobs):
        return self.pool.map(_mint, jobs, chunksize=256)

    def stop(self):
        self.pool.terminate()
        super().stop()


# ---------------------------------------------------------------------------------------------
# The server under test.

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Endpoint:
    """HTTP to a server on loopback `self.port` (a Herald node, or nginx in front of several)."""

    def request(self, method, path, body=None, headers=None, form=False):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            headers = dict(headers or {})
            data = None
            if body is not None:
                if form:
                    data = urllib.parse.urlencode(body)
                    headers["Content-Type"] = "application/x-www-form-urlencoded"
                else:
                    data = json.dumps(body)
                    headers["Content-Type"] = "application/json"
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            text = response.read()
            return response.status, (json.loads(text) if text[:1] in (b"{", b"[") else text)
        finally:
            connection.close()

    def admin(self, method, path, body=None):
        status, answer = self.request(method, path, body, {"Authorization": f"Bearer {self.admin_token}"})
        if status not in (200, 201):
            raise RuntimeError(f"admin {method} {path}: {status} {answer}")
        return answer

    def configure(self):
        """Realm, Apple provider, a first-party iOS client and a confidential third party."""
        self.admin("POST", "/api/admin/realms", {
            "id": REALM, "loginUrl": "https://login.bench.example/start", "nonceRequired": True,
            # Failures still invalidate a run (non-2xx must be 0); the high limit only keeps one
            # invalid scenario from turning every later one into 429s.
            "rateLimit": {"failuresPerWindow": 100_000, "windowSeconds": 300}})
        self.admin("PUT", f"/api/admin/realms/{REALM}/providers/apple",
                   {"enabled": True, "clientId": APPLE_SERVICES_ID, "audiences": [APPLE_BUNDLE_ID]})
        self.admin("POST", f"/api/admin/realms/{REALM}/clients", {
            "clientId": FIRST_PARTY, "name": "iOS app", "firstParty": True, "confidential": False,
            "redirectUris": []})
        created = self.admin("POST", f"/api/admin/realms/{REALM}/clients", {
            "clientId": THIRD_PARTY, "name": "Backend", "firstParty": False, "confidential": True,
            "redirectUris": [REDIRECT]})
        self.third_party_secret = created["clientSecret"]


class Herald(Endpoint):
    """One `herald serve` process: SQLite in `folder` by default; a node of a multi-node setup
    when given a PostgreSQL `database` URL, the shared `public_url` and extra `environment`
    (the shared master key, trusted proxies) and the shared `admin_token`."""

    def __init__(self, binary, folder, apple_url, database=None, public_url=None, environment=None,
                 admin_token=None):
        self.binary, self.folder, self.apple_url = binary, folder, apple_url
        self.db = os.path.join(folder, "herald.db")
        self.database = database or f"sqlite:{self.db}"
        self.public_url = public_url
        self.environment = environment or {}
        self.admin_token = admin_token or secrets.token_urlsafe(32)
        self.process = None

    def start(self, port=None):
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # Every request comes from 127.0.0.1, thousands a second: the request limits stay on
        # (their cost is part of what is measured) with budgets no run can reach.
        # BENCH_RATE_LIMIT=off measures without them (an A/B of their cost).
        limit = os.environ.get("BENCH_RATE_LIMIT", "100000000/60")
        env = dict(os.environ, HERALD_ADMIN_TOKEN=self.admin_token,
                   HERALD_LOG_LEVEL=os.environ.get("BENCH_LOG_LEVEL", "info"),
                   HERALD_RATE_LIMIT_PER_IP=limit, HERALD_RATE_LIMIT_PER_CLIENT=limit,
                   **self.environment)
        self.log = open(os.path.join(self.folder, "herald.log"), "ab")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--port", str(self.port), "--public-url", self.public_url or self.base,
             "--database", self.database, "--apple-jwks-url", self.apple_url],
            env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"herald exited with {self.process.returncode}")
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("herald did not become healthy")
            time.sleep(0.1)  # polling for start-up

    def stop(self):
        if self.process is None:
            return
        stop_process(self.process, signal.SIGTERM)
        self.process = None
        self.log.close()

    def failures(self):
        """The server's log lines about non-2xx answers (for a rejected run)."""
        with open(os.path.join(self.folder, "herald.log"), errors="replace") as f:
            lines = [line for line in f if '"status":2' not in line and '"outcome":"success"' not in line
                     and '"event":"listening"' not in line and '"event":"shutting_down"' not in line]
        return "".join(lines[:12])

    def cpu_seconds(self):
        """User + system CPU the server has used so far (robust to a busy machine, unlike req/s)."""
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory(self):
        """(peak RSS, current RSS) in MB from /proc."""
        values = {}
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    values[key] = int(rest.split()[0]) / 1024
        return values["VmHWM"], values["VmRSS"]


def seed_rows(count, prefix, now):
    """The `accounts` and `identities` rows of `count` returning users `prefix.%07d`, as
    AccountStore writes them (an Apple identity with a verified email)."""
    for i in range(count):
        account = secrets.token_urlsafe(16)
        email = f"user{i}@{prefix}.bench.example"
        yield ((account, REALM, email, now, now), (REALM, f"{prefix}.{i:07d}", account, email, now))


def seed_accounts_postgres(cluster, count, prefix):
    """The same rows as `seed_accounts`, inserted into PostgreSQL through psql (one
    transaction); the values are generated here (URL-safe ids, ASCII emails), never quoted input."""
    started = time.monotonic()
    rows = list(seed_rows(count, prefix, int(time.time())))
    accounts = ",\n".join(f"('{a}', '{r}', '{e}', 1, 0, NULL, NULL, NULL, 'active', {c}, {u})"
                          for (a, r, e, c, u), _ in rows)
    identities = ",\n".join(f"('{r}', 'apple', '{o}', '{a}', '{e}', {t})" for _, (r, o, a, e, t) in rows)
    cluster.psql("INSERT INTO accounts (id, realm_id, email, email_verified, is_private_email, given_name,"
                 " family_name, display_name, status, created_at, updated_at) VALUES\n" + accounts + ";\n"
                 "INSERT INTO identities (realm_id, provider, open_id, account_id, email, linked_at) VALUES\n"
                 + identities + ";\nANALYZE accounts;\nANALYZE identities;\n")
    return time.monotonic() - started


def seed_accounts(db, count, prefix):
    """Inserts `count` accounts with Apple identities `prefix.%07d` straight into SQLite
    (server stopped), the rows AccountStore would write."""
    started = time.monotonic()
    now = int(time.time())
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA journal_mode=WAL")
    with connection:
        rows = seed_rows(count, prefix, now)
        while batch := list(itertools.islice(rows, 50_000)):
            connection.executemany(
                "INSERT INTO accounts (id, realm_id, email, email_verified, is_private_email, given_name,"
                " family_name, display_name, status, created_at, updated_at)"
                " VALUES (?, ?, ?, 1, 0, NULL, NULL, NULL, 'active', ?, ?)", [account for account, _ in batch])
            connection.executemany(
                "INSERT INTO identities (realm_id, provider, open_id, account_id, email, linked_at)"
                " VALUES (?, 'apple', ?, ?, ?, ?)", [(r, o, a, e, t) for _, (r, o, a, e, t) in batch])
    connection.execute("ANALYZE")
    connection.close()
    return time.monotonic() - started


# ---------------------------------------------------------------------------------------------
# Several nodes: a throwaway PostgreSQL cluster, two Herald nodes on it, nginx in front.

def stop_process(process, sig):
    """Asks a child to stop with `sig`; kills it if it is still running 20 s later."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def process_tree_cpu_seconds(root_pid):
    """User + system CPU of `root_pid` and its direct children (nginx workers, PostgreSQL
    backends), from /proc."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(name) == root_pid or int(fields[1]) == root_pid:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


class PostgresCluster:
    """A throwaway PostgreSQL cluster, like Tests/Support/TestPostgres.swift: `initdb` into a
    temporary folder (as the unprivileged `postgres` user when run as root), a server on a free
    loopback port, removed by `stop()`, or by a watchdog if this process dies first.

    Unlike the tests' cluster it keeps PostgreSQL's durable defaults (fsync, synchronous
    commit, full-page writes): every acknowledged write is on disk, as with Herald's SQLite
    (`synchronous=FULL`)."""

    USER = "herald"
    DATABASE = "herald"

    def __init__(self):
        base = "/usr/lib/postgresql"
        versions = sorted((int(v) for v in os.listdir(base) if v.isdigit()), reverse=True) if os.path.isdir(base) else []
        if not versions:
            raise RuntimeError("PostgreSQL server binaries not found under /usr/lib/postgresql (make deps installs postgresql)")
        self.bin = f"{base}/{versions[0]}/bin"
        # Directly under /tmp: the postgres user must be able to reach it.
        self.folder = tempfile.mkdtemp(prefix="herald-bench-pg-")
        self.data = os.path.join(self.folder, "data")
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_postgres:
            shutil.chown(self.folder, "postgres", "postgres")
        self.port = free_port()
        self.postmaster = None
        self.watchdog = None

    def _run(self, *argv, as_postgres=True):
        # Output to a file, not a pipe: `pg_ctl start` leaves a server behind that may hold it.
        with tempfile.TemporaryFile() as output:
            result = subprocess.run((self.as_postgres if as_postgres else []) + list(argv),
                                    stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
            if result.returncode != 0:
                output.seek(0)
                raise RuntimeError(f"{os.path.basename(argv[0])} failed: {output.read().decode(errors='replace')[-2000:]}")

    def start(self):
        started = time.monotonic()
        self._run(f"{self.bin}/initdb", "-D", self.data, "-U", self.USER, "-A", "trust", "-E", "UTF8",
                  "--locale=C.UTF-8")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        self._run(f"{self.bin}/pg_ctl", "-D", self.data, "-l", os.path.join(self.folder, "server.log"),
                  "-o", options, "-w", "-t", "60", "start")
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.postmaster = int(f.readline())
        # Stops the cluster and removes it when this process is gone (even if it was killed).
        script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
                  f"{' '.join(self.as_postgres)} {self.bin}/pg_ctl -D {self.data} -m immediate -w stop; rm -rf {self.folder}")
        self.watchdog = subprocess.Popen(["setsid", "sh", "-c", script], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.USER, "-d", "postgres", "-q",
                  "-v", "ON_ERROR_STOP=1", "-c", f"CREATE DATABASE {self.DATABASE}", as_postgres=False)
        log(f"PostgreSQL {os.path.basename(os.path.dirname(self.bin))} on 127.0.0.1:{self.port}"
            f" ({time.monotonic() - started:.1f}s)")

    @property
    def url(self):
        return f"postgres://{self.USER}@127.0.0.1:{self.port}/{self.DATABASE}"

    def psql(self, sql):
        """Runs SQL (one transaction) on the Herald database through psql."""
        with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
            script.write(sql)
            script.flush()
            self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.USER, "-d", self.DATABASE, "-q",
                      "-v", "ON_ERROR_STOP=1", "--single-transaction", "-f", script.name, as_postgres=False)

    def cpu_seconds(self):
        return process_tree_cpu_seconds(self.postmaster) if self.postmaster else 0

    def stop(self):
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            try:
                self._run(f"{self.bin}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
            except RuntimeError as error:
                log(f"  stopping PostgreSQL: {error}")
        self.postmaster = None
        shutil.rmtree(self.folder, ignore_errors=True)


class Nginx:
    """nginx with the documented configuration (docs/nginx/herald-two-nodes.conf), only its
    ports replaced, in the foreground with every file under its own prefix folder."""

    CONFIG = os.path.join(ROOT, "docs/nginx/herald-two-nodes.conf")

    def __init__(self, upstream_ports):
        self.port = free_port()
        config = open(self.CONFIG).read()
        for directive, actual in (("listen 127.0.0.1:8080;", f"listen 127.0.0.1:{self.port};"),
                                  ("server 127.0.0.1:8081 ", f"server 127.0.0.1:{upstream_ports[0]} "),
                                  ("server 127.0.0.1:8082 ", f"server 127.0.0.1:{upstream_ports[1]} ")):
            if config.count(directive) != 1:
                raise RuntimeError(f"{self.CONFIG}: expected '{directive.strip()}' exactly once")
            config = config.replace(directive, actual)
        # Its own folder under /tmp, readable by the workers (run as root, nginx's workers switch
        # to `nobody`).
        self.prefix = tempfile.mkdtemp(prefix="herald-bench-nginx-")
        os.chmod(self.prefix, 0o755)
        self.config = os.path.join(self.prefix, "nginx.conf")
        with open(self.config, "w") as f:
            f.write(config)
        self.process = None

    def start(self):
        self.log = open(os.path.join(self.prefix, "stderr.log"), "ab")
        self.process = subprocess.Popen(["nginx", "-c", self.config, "-p", self.prefix + "/"],
                                        stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)

    def cpu_seconds(self):
        return process_tree_cpu_seconds(self.process.pid) if self.process else 0

    def stop(self):
        if self.process is not None:
            stop_process(self.process, signal.SIGQUIT)  # graceful: workers finish, then exit
            self.process = None
            self.log.close()
        shutil.rmtree(self.prefix, ignore_errors=True)


class NodeGroup(Endpoint):
    """Two Herald nodes on one PostgreSQL behind nginx, measured like one server: requests go
    through nginx; CPU is the sum of both nodes, peak RSS the larger node's; nginx's and
    PostgreSQL's CPU are reported beside it (`side_cpu_seconds`)."""

    count = 2  # the documented nginx configuration has two upstream servers

    def __init__(self, binary, folder, apple_url):
        self.postgres = PostgresCluster()
        # One admin token and one master key for every node (README: "Running several nodes").
        self.admin_token = secrets.token_urlsafe(32)
        self.master_key = secrets.token_hex(32)
        self.binary, self.folder, self.apple_url = binary, folder, apple_url
        self.nodes = []
        self.nginx = None

    def start(self):
        self.postgres.start()
        # The nodes' public URL is nginx's (one issuer for every node), so nginx's port is
        # chosen before the nodes start.
        ports = [free_port() for _ in range(self.count)]
        self.nginx = Nginx(ports)
        self.port = self.nginx.port
        self.base = f"http://127.0.0.1:{self.port}"
        for index in range(self.count):
            folder = tempfile.mkdtemp(prefix=f"node{index}-", dir=self.folder)
            node = Herald(self.binary, folder, self.apple_url, database=self.postgres.url, public_url=self.base,
                          admin_token=self.admin_token,
                          environment={"HERALD_MASTER_KEY": self.master_key, "HERALD_TRUSTED_PROXIES": "127.0.0.1"})
            self.nodes.append(node)
            node.start(port=ports[index])
        self.nginx.start()
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.request("GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            if self.nginx.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("nginx did not start: " + open(os.path.join(self.nginx.prefix, "stderr.log")).read()[-2000:])
            time.sleep(0.1)  # polling for start-up
        log(f"{self.count} nodes on PostgreSQL behind nginx at {self.base}")

    def stop(self):
        if self.nginx:
            self.nginx.stop()
            self.nginx = None
        for node in self.nodes:
            node.stop()
        self.nodes = []
        self.postgres.stop()

    def failures(self):
        return "".join(f"[node {i}]\n{node.failures()}" for i, node in enumerate(self.nodes))

    def cpu_seconds(self):
        return sum(node.cpu_seconds() for node in self.nodes)

    def side_cpu_seconds(self):
        return {"nginx": self.nginx.cpu_seconds(), "PostgreSQL": self.postgres.cpu_seconds()}

    def memory(self):
        values = [node.memory() for node in self.nodes]
        return max(peak for peak, _ in values), max(current for _, current in values)


# ---------------------------------------------------------------------------------------------
# Load.

def machine_load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def write_lines(path, lines):
    with open(path, "w") as f:
        for line in lines:
            f.write(line)
            f.write("\n")


def wrk(url, connections, duration, threads=2, bodies=None, path=None, content_type="application/json",
        capture=None):
    """Runs wrk; returns the summary dict bodies.lua/get.lua print."""
    env = dict(os.environ, BENCH_THREADS=str(threads))
    if bodies:
        env.update(BENCH_BODIES=bodies, BENCH_PATH=path, BENCH_CONTENT_TYPE=content_type)
        script = os.path.join(HERE, "bodies.lua")
    else:
        script = os.path.join(HERE, "get.lua")
    if capture:
        env["BENCH_CAPTURE"] = capture
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}", "--timeout", "10s", "-s", script, url]
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    for line in output.splitlines():
        if line.startswith("BENCH "):
            result = json.loads(line[6:])
            result["rps"] = result["requests"] / result["seconds"] if result["seconds"] else 0
            return result
    raise RuntimeError("wrk printed no summary:\n" + output)


class Bench:
    def __init__(self, args):
        self.args = args
        self.folder = tempfile.mkdtemp(prefix="herald-bench-")
        self.apple = FakeApple()
        self.results = []   # rows for the table
        self.duration = args.duration
        self.warmup = args.warmup

    # -- body files ----------------------------------------------------------------------------
    def login_bodies(self, name, subs, emails=None, state=None, client=FIRST_PARTY):
        jobs = [(sub, emails[i] if emails else None) for i, sub in enumerate(subs)]
        started = time.monotonic()
        minted = self.apple.mint(jobs)
        log(f"  minted {len(minted)} identity tokens in {time.monotonic() - started:.1f}s")
        path = os.path.join(self.folder, name)
        write_lines(path, (json.dumps({"identityToken": token, "clientId": client, "nonce": nonce},
                                      separators=(",", ":")) for token, nonce in minted))
        return path

    def returning_subs(self, count, pool, prefix):
        """`count` logins spread over `pool` seeded subjects (a pool of 1,000 returning users)."""
        step = max(1, self.seeded // pool)
        subjects = [f"{prefix}.{(i * step) % self.seeded:07d}" for i in range(pool)]
        return [subjects[i % pool] for i in range(count)]

    def new_subs(self, count):
        run = uuid.uuid4().hex[:8]
        return ([f"bench.new.{run}.{i:07d}" for i in range(count)],
                [f"new.{run}.{i}@bench.example" for i in range(count)])

    # -- one measured scenario -------------------------------------------------------------------
    def record(self, scenario, connections, result, extra=""):
        peak, current = self.herald.memory()
        row = dict(scenario=scenario, connections=connections, rps=result["rps"], p50=result["p50"],
                   p99=result["p99"], max=result["max"], non2xx=result["non2xx"] + result["socketErrors"],
                   peak_rss=peak, rss=current, load=machine_load(), note=extra,
                   wrapped=result.get("wrappedThreads", 0),
                   cpu_us=(result["cpu"] / result["requests"] * 1e6) if result.get("cpu") and result.get("requests") else 0)
        if result.get("side_cpu") and result.get("requests"):
            side = ", ".join(f"{name} {seconds / result['requests'] * 1e6:.0f}"
                             for name, seconds in result["side_cpu"].items())
            row["note"] = "; ".join(part for part in (row["note"], f"CPU µs/req beside both nodes': {side}") if part)
        if row["wrapped"]:
            row["note"] = (row["note"] + " TOKEN POOL EXHAUSTED").strip()
        self.results.append(row)
        log(f"  {scenario} c={connections}: {row['rps']:.0f} req/s p50 {row['p50']:.2f} ms p99 {row['p99']:.2f} ms"
            f" max {row['max']:.1f} ms non2xx {row['non2xx']} server CPU {row['cpu_us']:.0f} us/req peakRSS {peak:.0f} MB"
            f" load {row['load']}")
        return row

    def bodies_run(self, scenario, path, connections, make_bodies, content_type="application/json", rate_hint=None,
                   strict_warmup=True):
        """Warm-up with its own bodies, then the measured run with enough bodies for it. With
        `strict_warmup` off, non-2xx answers in the warm-up are counted in the result
        (`warmupNon2xx`) instead of ending the whole benchmark."""
        # Enough warm-up bodies that the warm-up never runs dry (a dry pool answers 401s): wrk
        # splits them evenly between its threads, which do not run equally fast.
        warm = make_bodies(int(max(self.args.warmup_rate, (rate_hint or 0)) * self.warmup * 1.6) + 2000)
        result = wrk(self.herald.base, connections, f"{self.warmup}s", bodies=warm, path=path, content_type=content_type)
        warmup_failures = result["non2xx"] + result["socketErrors"]
        if warmup_failures and strict_warmup:
            raise RuntimeError(f"{scenario}: warm-up answered {result['non2xx']} non-2xx ({result}):\n" + self.herald.failures())
        # Sized for the fastest rate seen or plausible: a pool that runs dry turns into replays.
        rate = max(result["rps"], rate_hint or 0, self.args.warmup_rate)
        needed = int(rate * self.duration * 1.6) + 2000
        log(f"  {scenario} c={connections}: warm-up {result['rps']:.0f} req/s; preparing {needed} bodies")
        bodies = make_bodies(needed)
        side = getattr(self.herald, "side_cpu_seconds", dict)
        cpu, side_before = self.herald.cpu_seconds(), side()
        result = wrk(self.herald.base, connections, f"{self.duration}s", bodies=bodies, path=path,
                     content_type=content_type)
        result["cpu"] = self.herald.cpu_seconds() - cpu
        result["warmupNon2xx"] = warmup_failures
        # Several nodes: what nginx and PostgreSQL spent per request, beside the nodes' CPU.
        result["side_cpu"] = {name: seconds - side_before[name] for name, seconds in side().items()}
        return result

    # -- scenarios -------------------------------------------------------------------------------
    def ceiling(self, connections):
        for name, path in (("5a /healthz", "/healthz"), ("5b /jwks.json", f"/api/oauth/{REALM}/jwks.json")):
            wrk(self.herald.base + path, connections, f"{self.warmup}s")
            cpu = self.herald.cpu_seconds()
            result = wrk(self.herald.base + path, connections, f"{self.duration}s")
            result["cpu"] = self.herald.cpu_seconds() - cpu
            self.record(name, connections, result)

    def returning(self, connections, label="1 login, returning", prefix="bench.seed", strict_warmup=True):
        path = f"/api/oauth/{REALM}/apple/native-login"
        make = lambda n: self.login_bodies("returning.jsonl", self.returning_subs(n, 1000, prefix))
        result = self.bodies_run(label, path, connections, make, rate_hint=self.login_rate, strict_warmup=strict_warmup)
        note = f"warm-up non-2xx: {result['warmupNon2xx']}" if result["warmupNon2xx"] else ""
        if result["warmupNon2xx"] or result["non2xx"]:
            log(f"  {label} c={connections}: the server's first non-2xx log lines:\n" + self.herald.failures())
        return self.record(label, connections, result, note)

    def new_users(self, connections):
        path = f"/api/oauth/{REALM}/apple/native-login"

        def make(n):
            subs, emails = self.new_subs(n)
            return self.login_bodies("new.jsonl", subs, emails)
        return self.record("2 login, new user", connections, self.bodies_run("2 login, new user", path, connections, make,
                                                                                 rate_hint=self.login_rate))

    def sessions(self, count):
        """`count` refresh tokens from real branch-A logins (wrk in capture mode, not measured)."""
        bodies = self.login_bodies("sessions.jsonl", self.returning_subs(count, 1000, "bench.seed"))
        prefix = os.path.join(self.folder, "captured")
        rate = max(200, self.login_rate)
        seconds = int(count / rate * 1.5) + 3
        wrk(self.herald.base, 16, f"{seconds}s", bodies=bodies, path=f"/api/oauth/{REALM}/apple/native-login",
            capture=prefix)
        tokens = []
        for name in os.listdir(self.folder):
            if name.startswith("captured."):
                with open(os.path.join(self.folder, name)) as f:
                    tokens.extend(line.strip() for line in f if line.strip())
                os.remove(os.path.join(self.folder, name))
        log(f"  captured {len(tokens)} sessions of {count} in {seconds}s")
        return tokens

    def refresh(self, connections):
        path = f"/api/oauth/{REALM}/token"

        def make(n):
            tokens = self.sessions(n)
            file = os.path.join(self.folder, "refresh.form")
            write_lines(file, (urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": t,
                                                       "client_id": FIRST_PARTY}) for t in tokens))
            return file
        label = "3 /token refresh"
        return self.record(label, connections,
                           self.bodies_run(label, path, connections, make, "application/x-www-form-urlencoded",
                                                          rate_hint=self.login_rate * 1.5))

    def flows(self, concurrency):
        """Scenario 4: authorize → native login (branch B) → code exchange, as flows per second."""
        # One identity token per flow, for the warm-up and the run; sized like the wrk pools.
        count = int(max(self.login_rate, self.args.warmup_rate) * (self.duration + 2) * 1.3) + 500
        minted = self.apple.mint([(s, None) for s in self.returning_subs(count, 1000, "bench.seed")])
        secret = self.herald.third_party_secret
        port = self.herald.port
        latencies, failures, lock = [], [0], threading.Lock()
        next_token = [0]
        deadline = [0.0]

        def flow(connection, token, raw_nonce):
            verifier = secrets.token_urlsafe(48)
            challenge = b64url(hashlib.sha256(verifier.encode()).digest())
            state = secrets.token_urlsafe(16)
            query = urllib.parse.urlencode({"response_type": "code", "client_id": THIRD_PARTY, "redirect_uri": REDIRECT,
                                            "state": state, "code_challenge": challenge,
                                            "code_challenge_method": "S256", "scope": "openid"})
            connection.request("GET", f"/api/oauth/{REALM}/authorize?{query}", headers={"Accept": "application/json"})
            response = connection.getresponse()
            answer = json.loads(response.read())
            if response.status != 200:
                return False
            body = json.dumps({"identityToken": token, "clientId": THIRD_PARTY, "nonce": raw_nonce,
                               "downstreamState": answer["downstreamState"]})
            connection.request("POST", f"/api/oauth/{REALM}/apple/native-login", body=body,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            answer = json.loads(response.read())
            if response.status != 200:
                return False
            code = urllib.parse.parse_qs(urllib.parse.urlparse(answer["redirectUri"]).query)["code"][0]
            form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                           "client_id": THIRD_PARTY, "client_secret": secret,
                                           "code_verifier": verifier})
            connection.request("POST", f"/api/oauth/{REALM}/token", body=form,
                               headers={"Content-Type": "application/x-www-form-urlencoded"})
            response = connection.getresponse()
            answer = json.loads(response.read())
            return response.status == 200 and "access_token" in answer

        def worker():
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            while time.monotonic() < deadline[0]:
                with lock:
                    index = next_token[0]
                    next_token[0] += 1
                if index >= len(minted):
                    with lock:
                        failures[0] += 1   # pool exhausted: counted, so the run is rejected
                    return
                started = time.monotonic()
                try:
                    ok = flow(connection, *minted[index])
                except (OSError, http.client.HTTPException, ValueError, KeyError):
                    ok = False
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                elapsed = (time.monotonic() - started) * 1000
                with lock:
                    if ok:
                        latencies.append(elapsed)
                    else:
                        failures[0] += 1
            connection.close()

        def run(seconds):
            latencies.clear()
            deadline[0] = time.monotonic() + seconds
            started = time.monotonic()
            threads = [threading.Thread(target=worker) for _ in range(concurrency)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return time.monotonic() - started

        run(min(2, self.warmup))
        cpu = self.herald.cpu_seconds()
        elapsed = run(self.duration)
        cpu = self.herald.cpu_seconds() - cpu
        latencies.sort()
        pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else 0
        result = {"rps": len(latencies) / elapsed, "p50": pick(0.5), "p99": pick(0.99),
                  "max": latencies[-1] if latencies else 0, "non2xx": failures[0], "socketErrors": 0,
                  "cpu": cpu, "requests": len(latencies)}
        return self.record("4 third-party flow", concurrency, result, "flows/s (3 requests each); Python driver")

    def two_nodes(self):
        """Scenario 1 again on two nodes + PostgreSQL behind nginx (the documented setup): the
        same 1,000 returning users, seeded with the same rows as for SQLite (through psql), at
        every connection count. Non-2xx answers are counted, not fatal, so the table shows them
        (the run is still reported invalid)."""
        single = getattr(self, "herald", None)
        if single:
            single.stop()   # the SQLite server would compete for the cores
        log("== returning users on 2 nodes + PostgreSQL behind nginx")
        self.group = NodeGroup(self.args.herald, self.folder, self.apple.url)
        self.group.start()
        self.group.configure()
        pool = 1000
        seconds = seed_accounts_postgres(self.group.postgres, pool, "bench.seed")
        log(f"seeded {pool} accounts through psql in {seconds:.1f}s (load {machine_load()})")
        path = f"/api/oauth/{REALM}/apple/native-login"
        token, nonce = self.apple.mint([("bench.seed.0000000", None)])[0]
        status, answer = self.group.request("POST", path, {"identityToken": token, "clientId": FIRST_PARTY,
                                                           "nonce": nonce})
        if status != 200 or answer.get("isNewUser") is not False:
            raise RuntimeError(f"a seeded account did not log in as a returning user: {status} {answer}")
        seeded, self.seeded, self.herald = getattr(self, "seeded", pool), pool, self.group
        try:
            for connections in self.args.connections:
                self.returning(connections, "1b login, returning, 2 nodes + PostgreSQL (nginx)", strict_warmup=False)
        finally:
            self.herald, self.seeded = single, seeded
            self.group.stop()
            self.group = None

    # -- the whole run ---------------------------------------------------------------------------
    def fresh_server(self, seeded):
        """New database: start (migrations), configure, stop, seed `seeded` accounts, start."""
        if getattr(self, "herald", None):
            self.herald.stop()
        folder = tempfile.mkdtemp(prefix="db-", dir=self.folder)
        self.herald = Herald(self.args.herald, folder, self.apple.url)
        self.herald.start()
        self.herald.configure()
        self.herald.stop()
        seconds = seed_accounts(self.herald.db, seeded, "bench.seed")
        self.seeded = seeded
        log(f"seeded {seeded} accounts in {seconds:.1f}s (load {machine_load()})")
        self.herald.start()
        # Sanity: a seeded subject is a returning user.
        token, nonce = self.apple.mint([("bench.seed.0000000", None)])[0]
        status, answer = self.herald.request("POST", f"/api/oauth/{REALM}/apple/native-login",
                                             {"identityToken": token, "clientId": FIRST_PARTY, "nonce": nonce})
        if status != 200 or answer.get("isNewUser") is not False:
            raise RuntimeError(f"seeded account did not log in as a returning user: {status} {answer}")
        return seconds

    def run(self):
        self.login_rate = 500
        only = self.args.scenarios
        if only - {"returning-2node-pg"}:
            self.fresh_server(1000)
        for connections in self.args.connections:
            log(f"== {connections} connections")
            if "ceiling" in only:
                self.ceiling(connections)
            if "returning" in only:
                row = self.returning(connections)
                self.login_rate = max(self.login_rate, row["rps"])
            if "new" in only:
                self.new_users(connections)
            if "refresh" in only:
                self.refresh(connections)
        if "flow" in only:
            for concurrency in self.args.connections:
                self.flows(concurrency)
        if "returning-2node-pg" in only:
            self.two_nodes()
        self.scale = []
        for count in (self.args.scale if "scale" in only else []):
            log(f"== scale: {count} accounts")
            seconds = self.fresh_server(count)
            row = self.returning(64, f"1 returning @ {count:,} accounts")
            row["note"] = f"seeded in {seconds:.0f}s"
            self.scale.append((count, row))
        if getattr(self, "herald", None):
            self.herald.stop()

    def cleanup(self):
        if getattr(self, "group", None):
            self.group.stop()
        if getattr(self, "herald", None):
            self.herald.stop()
        self.apple.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Report.

def find(rows, prefix, connections):
    for row in rows:
        if row["scenario"].startswith(prefix) and row["connections"] == connections:
            return row
    return None


def targets(bench):
    rows = bench.results
    checks = []
    for c in bench.args.connections:
        health, login, refresh = find(rows, "5a", c), find(rows, "1 login", c), find(rows, "3 ", c)
        if health and login:
            checks.append((f"S1 >= 40% of /healthz (c={c})", f"{login['rps'] / health['rps']:.0%}",
                           login["rps"] >= 0.4 * health["rps"]))
        if health and refresh:
            checks.append((f"S3 >= 50% of /healthz (c={c})", f"{refresh['rps'] / health['rps']:.0%}",
                           refresh["rps"] >= 0.5 * health["rps"]))
    login64 = find(rows, "1 login", 64)
    if login64:
        checks.append(("S1 p99 <= 25 ms at c=64", f"{login64['p99']:.1f} ms", login64["p99"] <= 25))
    if len(bench.scale) >= 2:
        (small_n, small), (large_n, large) = bench.scale[0], bench.scale[-1]
        ratio = large["p50"] / small["p50"] if small["p50"] else float("inf")
        checks.append((f"S1 p50 @ {large_n:,} <= 1.25x @ {small_n:,}", f"{ratio:.2f}x", ratio <= 1.25))
    peak = max((row["peak_rss"] for row in rows), default=0)
    checks.append(("peak RSS < 150 MB, every scenario", f"{peak:.0f} MB", peak < 150))
    errors = sum(row["non2xx"] for row in rows)
    checks.append(("non-2xx = 0, every scenario", str(errors), errors == 0))
    return checks


def table(bench):
    lines = ["| scenario | conns | req/s | p50 ms | p99 ms | max ms | non-2xx | server CPU µs/req | peak RSS MB | load avg | note |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in bench.results:
        lines.append(f"| {r['scenario']} | {r['connections']} | {r['rps']:.0f} | {r['p50']:.2f} | {r['p99']:.2f} |"
                     f" {r['max']:.1f} | {r['non2xx']} | {r['cpu_us']:.0f} | {r['peak_rss']:.0f} | {r['load']} | {r['note']} |")
    lines += ["", "| target | measured | met |", "|---|---|---|"]
    for name, value, met in targets(bench):
        lines.append(f"| {name} | {value} | {'yes' if met else 'NO'} |")
    return "\n".join(lines)


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    return commit + ("+dirty" if dirty else ""), f"{os.cpu_count()} cores, {model}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--herald", default=os.path.join(ROOT, ".build/release/herald"))
    parser.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    parser.add_argument("--warmup", type=int, default=3, help="seconds of warm-up per run")
    parser.add_argument("--warmup-rate", type=int, default=3500,
                        help="requests/s the warm-up's body pool is sized for (before a rate is known)")
    parser.add_argument("--connections", default="16,64")
    parser.add_argument("--scale", default="1000,1000000", help="account counts for the scale run")
    parser.add_argument("--scenarios", default="ceiling,returning,new,refresh,flow,returning-2node-pg,scale",
                        help="which to run (comma-separated subset); returning-2node-pg is scenario 1 on two"
                             " nodes + PostgreSQL behind nginx")
    parser.add_argument("--results", default=os.path.join(ROOT, "bench/RESULTS.md"))
    parser.add_argument("--no-record", action="store_true", help="print only; don't append to RESULTS.md")
    args = parser.parse_args()
    args.connections = [int(c) for c in args.connections.split(",") if c]
    args.scale = [int(c) for c in args.scale.split(",") if c]
    args.scenarios = set(args.scenarios.split(","))
    # SIGTERM (a stopped `make`) unwinds like Ctrl-C, so the server and wrk don't outlive us.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    commit, cpu = machine()
    started_load = machine_load()
    bench = Bench(args)
    try:
        bench.run()
    finally:
        bench.cleanup()
    report = table(bench)
    header = (f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} — commit {commit}\n\n"
              f"Machine: {cpu}; load average at start {started_load}, at end {machine_load()}. "
              f"wrk -t2, {args.duration}s after {args.warmup}s warm-up; load generator on the same machine.\n")
    print(header)
    print(report)
    if not args.no_record:
        with open(args.results, "a") as f:
            f.write("\n" + header + "\n" + report + "\n")
    # A benchmark, not a test: missed targets are reported in the table; only an invalid run
    # (non-2xx answers, an exhausted token pool) fails.
    invalid = any(row["non2xx"] or row["wrapped"] for row in bench.results)
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
