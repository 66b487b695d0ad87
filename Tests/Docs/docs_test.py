"""Runs the snippets of the integrator and operator docs against the real binary (Tests/Docs/run.sh).

A fenced block right after `<!-- doc-test: NAME -->` is run (shell blocks by bash with
`set -euo pipefail`, in the repository root) and its output is checked by `snippets.CHECKS[NAME]`;
a block right after `<!-- doc-include: PATH -->` must appear verbatim in PATH. A shell block with
curl, or a config block, that carries neither mark fails the stage, and so does a check without its
block: a snippet cannot drift away from its test. Environment: HERALD_BIN (the herald executable)."""
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import uuid

import requests

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "Tests", "Browser"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeapple_web  # noqa: E402
import snippets  # noqa: E402

DOCS = ["docs/apple-setup.md", "docs/ios-quickstart.md", "docs/troubleshooting.md", "docs/third-party.md",
        "docs/production.md"]
MARK = re.compile(r"^<!-- doc-(test|include): (\S+) -->\s*$")
FENCE = re.compile(r"^```(\S*)\s*$")
CONFIG_LANGUAGES = {"nginx", "ini", "yaml", "yml", "systemd", "conf"}
REALM = "acme"
BUNDLE_ID = "com.acme.ios"
SERVICES_ID = "com.acme.web"


class Block:
    def __init__(self, path, line, mark, name, language, text):
        self.path, self.line, self.mark, self.name, self.language, self.text = path, line, mark, name, language, text

    def where(self):
        return f"{self.path}:{self.line}"


def blocks(path):
    """Every fenced block of `path`, with the doc-test / doc-include mark on the line before it."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, index, pending = [], 0, None
    while index < len(lines):
        mark = MARK.match(lines[index])
        fence = FENCE.match(lines[index])
        if mark:
            pending = (mark.group(1), mark.group(2))
        elif fence:
            start = index
            index += 1
            body = []
            while index < len(lines) and not lines[index].startswith("```"):
                body.append(lines[index])
                index += 1
            kind, name = pending if pending else (None, None)
            found.append(Block(path, start + 1, kind, name, fence.group(1), "\n".join(body) + "\n"))
            pending = None
        elif lines[index].strip():
            pending = None
        index += 1
    return found


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Herald:
    """A `herald serve` process with its own SQLite folder (or `folder`), stopped by `stop()`."""

    def __init__(self, binary, apple, folder=None, env=None, args=()):
        self.owns_folder = folder is None
        self.folder = folder or tempfile.mkdtemp(prefix="herald-docs-")
        self.admin_token = secrets.token_hex(32)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        environment = dict(os.environ, HERALD_ADMIN_TOKEN=self.admin_token, HERALD_LOG_LEVEL="warning")
        environment.update(env or {})
        self.log_path = os.path.join(self.folder, "herald.log")
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--public-url", self.base,
             "--database", f"sqlite:{self.folder}/herald.db", "--apple-jwks-url", apple.jwks_url,
             "--apple-base-url", apple.base, *args],
            env=environment, stdout=self.log, stderr=subprocess.STDOUT)
        wait_healthy(self.base, self.process, self.read_log)

    def read_log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def admin(self, method, path, body=None, expect=(200, 201)):
        response = requests.request(method, self.base + path, json=body, timeout=10,
                                    headers={"Authorization": f"Bearer {self.admin_token}"})
        assert response.status_code in expect, f"{method} {path}: {response.status_code} {response.text}"
        return response.json() if response.content else None

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        if self.owns_folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def wait_healthy(base, process, read_log, path="/healthz", deadline_seconds=30, verify=True):
    deadline = time.monotonic() + deadline_seconds
    while True:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode}: {read_log()}")
        try:
            if requests.get(base + path, timeout=1, verify=verify).status_code == 200:
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{base} did not become healthy: {read_log()}")
        time.sleep(0.1)  # polling for start-up, not papering over a race


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    def __repr__(self):
        return f"rc={self.rc}\n--- stdout\n{self.out[-2000:]}\n--- stderr\n{self.err[-2000:]}"


class Context:
    """What the snippets run against: the fake Apple, one Herald with realm `acme` configured as the
    docs describe it (Apple provider with the fake's Team ID, Key ID and .p8; an iOS client; a
    partner backend), and helpers that play the iOS app."""

    def __init__(self, binary):
        self.binary = binary
        self.root = ROOT
        self.tmp = tempfile.mkdtemp(prefix="herald-docs-run-")
        self.apple = fakeapple_web.FakeAppleWeb(subject="001234.docs.0001", email="jane@example.com")
        self.p8_path = os.path.join(self.tmp, "AuthKey_KEYWEB4567.p8")
        with open(self.p8_path, "w") as f:
            f.write(self.apple.p8)
        self.herald = Herald(binary, self.apple)
        self.others = []
        self.values = {}
        self.pidfiles = []  # Herald processes the snippets start (the systemctl stand-in)
        self.free_port = free_port
        self.wait_healthy = wait_healthy

    def env(self, herald=None):
        herald = herald or self.herald
        return dict(os.environ, PATH=os.path.dirname(self.binary) + os.pathsep + os.environ["PATH"],
                    HERALD=herald.base, HERALD_ADMIN=herald.base, HERALD_ADMIN_TOKEN=herald.admin_token,
                    AUTH=f"Authorization: Bearer {herald.admin_token}", FAKE=self.apple.base,
                    P8=self.p8_path, TMPDIR=self.tmp)

    def start_herald(self, **options):
        herald = Herald(self.binary, self.apple, **options)
        self.others.append(herald)
        return herald

    def configure_realm(self, herald=None, realm=REALM):
        """Realm, Apple provider and clients as apple-setup.md and third-party.md set them up."""
        herald = herald or self.herald
        herald.admin("POST", "/api/admin/realms", {"id": realm, "loginUrl": "https://login.acme.example/apple"})
        herald.admin("PUT", f"/api/admin/realms/{realm}/providers/apple", {
            "clientId": SERVICES_ID, "audiences": [BUNDLE_ID], "teamId": fakeapple_web.TEAM_ID,
            "keyId": fakeapple_web.KEY_ID, "privateKey": self.apple.p8,
            "returnUrls": [f"{herald.base}/api/oauth/{realm}/apple/callback"]})
        herald.admin("POST", f"/api/admin/realms/{realm}/clients",
                     {"clientId": "acme-ios", "name": "Acme for iOS", "firstParty": True})
        backend = herald.admin("POST", f"/api/admin/realms/{realm}/clients", {
            "clientId": "acme-backend", "name": "Acme backend", "confidential": True,
            "redirectUris": ["https://app.acme.example/oauth/callback"],
            "allowedScopes": ["openid", "profile", "email"]})
        return backend["clientSecret"]

    def credential(self, sub=None, aud=BUNDLE_ID, code=False, email=None):
        """What the iOS sheet hands the app: (raw nonce, identity token, authorization code or None).
        Each Apple user has an email of their own (a shared verified email would link accounts)."""
        nonce = uuid.uuid4().hex
        sub = sub or self.apple.subject
        email = email or ("jane@example.com" if sub == self.apple.subject else f"{sub}@example.com")
        minted = self.apple.native_credential(aud, sub, nonce, email=email, code=code)
        return nonce, minted["identityToken"], minted.get("authorizationCode")

    def native_login(self, herald=None, sub=None, code=False, client="acme-ios", downstream=None, realm=REALM):
        herald = herald or self.herald
        nonce, token, authorization_code = self.credential(sub=sub, code=code)
        body = {"identityToken": token, "clientId": client, "nonce": nonce}
        if authorization_code:
            body["authorizationCode"] = authorization_code
        if downstream:
            body["downstreamState"] = downstream
        response = requests.post(f"{herald.base}/api/oauth/{realm}/apple/native-login", json=body, timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def metrics(self, herald=None):
        return requests.get((herald or self.herald).base + "/metrics", timeout=10,
                            headers={"Authorization": f"Bearer {(herald or self.herald).admin_token}"}).text

    def stop(self):
        for pidfile in self.pidfiles:
            if os.path.exists(pidfile):
                subprocess.run(["kill", open(pidfile).read().strip()], check=False)
        for herald in [self.herald, *self.others]:
            herald.stop()
        self.apple.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def run_shell(text, env, cwd=ROOT, timeout=60):
    process = subprocess.run(["bash", "-c", "set -euo pipefail\n" + text], env=env, cwd=cwd, capture_output=True,
                             text=True, timeout=timeout)
    return Result(process.returncode, process.stdout, process.stderr)


def lint(all_blocks):
    """Unmarked curl or config blocks, marks on nothing, duplicate names, checks without blocks."""
    problems = []
    names = {}
    for block in all_blocks:
        shell = block.language in ("sh", "bash", "console", "")
        if block.mark is None and ((shell and "curl " in block.text) or block.language in CONFIG_LANGUAGES):
            problems.append(f"{block.where()}: a {block.language or 'plain'} block with curl or config has no doc-test/doc-include mark")
        if block.mark == "test":
            if block.name in names:
                problems.append(f"{block.where()}: doc-test {block.name} also at {names[block.name]}")
            names[block.name] = block.where()
            if block.name not in snippets.CHECKS:
                problems.append(f"{block.where()}: doc-test {block.name} has no check in snippets.py")
    for name in snippets.CHECKS:
        if name not in names:
            problems.append(f"snippets.py: check {name} has no doc-test block")
    return problems


def main():
    binary = os.environ.get("HERALD_BIN")
    if not binary:
        sys.exit("HERALD_BIN must name the herald executable")
    started = time.monotonic()
    all_blocks = [block for path in DOCS for block in blocks(path)]
    failures = lint(all_blocks)
    for block in all_blocks:
        if block.mark == "include":
            with open(block.name, encoding="utf-8") as f:
                if block.text not in f.read():
                    failures.append(f"{block.where()}: the block is not a verbatim excerpt of {block.name}")
    context = Context(binary)
    passed, skipped = 0, []
    try:
        snippets.prepare(context)
        for block in all_blocks:
            if block.mark != "test" or block.name not in snippets.CHECKS:
                continue
            setup, verify = snippets.CHECKS[block.name]
            step = time.monotonic()
            try:
                extra = setup(context) if setup else {}
                env = dict(context.env(extra.pop("_herald", None)), **extra)
                result = run_shell(block.text, env) if block.language in ("sh", "bash") else block
                verify(result, context)
                passed += 1
                print(f"ok   {block.name:<32} {block.where()} ({time.monotonic() - step:.1f} s)", flush=True)
            except snippets.Skip as why:
                skipped.append(f"{block.name}: {why}")
                print(f"skip {block.name:<32} {block.where()}: {why}", flush=True)
            except Exception as error:  # a failed check is reported and the stage goes on
                detail = traceback.format_exc(limit=3)
                failures.append(f"{block.where()}: {block.name}: {error!r}\n{detail}")
                print(f"FAIL {block.name:<32} {block.where()}", flush=True)
        for file_check in snippets.FILE_CHECKS:
            step = time.monotonic()
            try:
                file_check(context)
                passed += 1
                print(f"ok   {file_check.__name__:<32} ({time.monotonic() - step:.1f} s)", flush=True)
            except snippets.Skip as why:
                skipped.append(f"{file_check.__name__}: {why}")
                print(f"skip {file_check.__name__:<32}: {why}", flush=True)
            except Exception as error:
                failures.append(f"{file_check.__name__}: {error!r}\n{traceback.format_exc(limit=3)}")
                print(f"FAIL {file_check.__name__}", flush=True)
    finally:
        context.stop()
    for failure in failures:
        print("\n" + failure, file=sys.stderr)
    print(f"docs: {passed} passed, {len(skipped)} skipped, {len(failures)} failed in {time.monotonic() - started:.1f} s")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
