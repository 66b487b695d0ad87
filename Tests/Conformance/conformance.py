"""OpenAPI conformance: schemathesis against the document a throwaway `herald serve` serves.

Starts a fake Apple (Tests/Interop/fakeapple.py) and herald on free loopback ports with a
temporary SQLite database and a random admin token, seeds a realm, its Apple and Google
providers, a confidential client, a first-party client and one account with a live session
(through a real native login), then runs schemathesis in three passes over the operations:

1. everything that leaves the seed as it is (public, OAuth, session reads, admin reads);
2. admin changes and logout, which alter the seed but leave it in place;
3. deletes last, since they take the seed away (DELETE of the realm empties it).

Later passes would only see 404s from a seed an earlier pass destroyed; the order keeps every
operation reaching real data. Every pass runs the four checks the stage exists for:
not_a_server_error, status_code_conformance, content_type_conformance and
response_schema_conformance. Path parameters are pinned to the seed (schemathesis.toml) so
realm-scoped routes are reached at all; malformed path segments are covered by the Swift
suites (HostileInputTests, OpenAPIDocumentTests).

Usage: python conformance.py HERALD_BINARY   (run.sh sets up the virtual environment)
Environment: CONFORMANCE_MAX_EXAMPLES (default 50), CONFORMANCE_SEED (default 16)."""
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Interop"))
import fakeapple  # noqa: E402 (the path above makes it importable)

REALM = "conformance"
APPLE_AUDIENCE = "com.example.conformance.ios"
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"

# Pass 2: operations that change the seed but keep it usable.
CHANGES = ["createRealm", "updateRealm", "putAppleProvider", "putGoogleProvider", "createClient", "updateClient",
           "rotateClientSecret", "updateAccount", "rotateSigningKey", "logout", "createAdminToken"]
# Pass 3: operations that remove seed data.
DELETES = ["deleteAccount", "deleteMe", "revokeAccountSessions", "deleteClient", "deleteAppleProvider",
           "deleteGoogleProvider", "deleteRealm", "deleteAdminToken"]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Herald:
    """`herald serve` on a free loopback port with its own SQLite file."""

    def __init__(self, binary, apple_url):
        self.folder = tempfile.mkdtemp(prefix="herald-conformance-")
        self.admin_token = secrets.token_urlsafe(32)
        self.base = f"http://127.0.0.1:{free_port()}"
        port = self.base.rsplit(":", 1)[1]
        # The admin authentication failure limit is off: schemathesis sends wrong credentials to
        # every operation, and a full window would turn the rest of a pass into 429s that test
        # nothing. The limit has its own tests (AdminAuthenticationLimitTests).
        env = dict(os.environ, HERALD_ADMIN_TOKEN=self.admin_token, HERALD_LOG_LEVEL="warning",
                   HERALD_ADMIN_AUTH_FAILURE_LIMIT="off")
        self.log_path = os.path.join(self.folder, "herald.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", port, "--public-url", self.base,
             "--database", f"sqlite:{self.folder}/herald.db", "--apple-jwks-url", apple_url],
            env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"herald exited with {self.process.returncode}: {self.tail()}")
            try:
                if requests.get(self.base + "/healthz", timeout=1).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("herald did not become healthy: " + self.tail())
            time.sleep(0.1)  # polling for start-up, not papering over a race

    def tail(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    def admin(self, method, path, body=None):
        response = requests.request(method, self.base + path, json=body, timeout=10,
                                    headers={"Authorization": f"Bearer {self.admin_token}"})
        if response.status_code not in (200, 201):
            raise RuntimeError(f"seed {method} {path}: {response.status_code} {response.text}")
        return response.json()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def seed(herald, apple):
    """The realm and what lives in it; returns the values schemathesis.toml reads."""
    herald.admin("POST", "/api/admin/realms", {
        "id": REALM, "loginUrl": "https://login.conformance.example/start",
        # Generated native logins fail by the hundred; the limiter would answer most of them 429.
        "rateLimit": {"failuresPerWindow": 100000, "windowSeconds": 1}})
    herald.admin("PUT", f"/api/admin/realms/{REALM}/providers/apple",
                 {"enabled": True, "clientId": "com.example.conformance.web", "audiences": [APPLE_AUDIENCE]})
    herald.admin("PUT", f"/api/admin/realms/{REALM}/providers/google",
                 {"clientIds": ["123456789012-conformance.apps.googleusercontent.com"], "hostedDomain": None})
    web = herald.admin("POST", f"/api/admin/realms/{REALM}/clients", {
        "clientId": "web", "name": "web", "confidential": True, "redirectUris": ["https://web.example/callback"]})
    herald.admin("POST", f"/api/admin/realms/{REALM}/clients", {"clientId": "ios", "name": "ios", "firstParty": True})
    raw_nonce = "raw-" + uuid.uuid4().hex
    login = requests.post(f"{herald.base}/api/oauth/{REALM}/apple/native-login", timeout=10, json={
        "identityToken": apple.identity_token(APPLE_AUDIENCE, "001234.conformance.0001", raw_nonce,
                                              email="conformance@example.com"),
        "clientId": "ios", "nonce": raw_nonce, "fullName": {"givenName": "Con", "familyName": "Formance"}})
    if login.status_code != 200:
        raise RuntimeError(f"seed native login: {login.status_code} {login.text}")
    tokens = login.json()
    return {"CONFORMANCE_BASE_URL": herald.base, "CONFORMANCE_REALM": REALM,
            "CONFORMANCE_ADMIN_TOKEN": herald.admin_token, "CONFORMANCE_ACCESS_TOKEN": tokens["accessToken"],
            "CONFORMANCE_CLIENT_ID": "web", "CONFORMANCE_CLIENT_SECRET": web["clientSecret"],
            "CONFORMANCE_ACCOUNT_ID": tokens["userId"]}


def schemathesis(environment, label, selection):
    """One pass; True when green. The document is read from the server, as clients read it."""
    executable = os.path.join(os.path.dirname(sys.executable), "schemathesis")
    command = [executable, "--config-file", os.path.join(HERE, "schemathesis.toml"), "run",
               environment["CONFORMANCE_BASE_URL"] + "/api-docs/openapi.yaml",
               "--url", environment["CONFORMANCE_BASE_URL"], "--checks", CHECKS,
               "--max-examples", os.environ.get("CONFORMANCE_MAX_EXAMPLES", "50"),
               "--seed", os.environ.get("CONFORMANCE_SEED", "16"),
               "--phases", "examples,coverage,fuzzing", "--workers", "1", "--no-color",
               "--request-timeout", "10", "--generation-database", "none", *selection]
    print(f"conformance: pass {label}", flush=True)
    started = time.monotonic()
    result = subprocess.run(command, env=dict(os.environ, **environment))
    print(f"conformance: pass {label} took {time.monotonic() - started:.0f} s", flush=True)
    return result.returncode == 0


def main():
    if len(sys.argv) != 2:
        print("usage: conformance.py HERALD_BINARY", file=sys.stderr)
        return 2
    apple = fakeapple.FakeApple(kid="conformance-rsa-1")
    herald = Herald(sys.argv[1], apple.url)
    try:
        environment = seed(herald, apple)
        keep = [option for operation in CHANGES + DELETES for option in ("--exclude-operation-id", operation)]
        changes = [option for operation in CHANGES for option in ("--include-operation-id", operation)]
        deletes = [option for operation in DELETES for option in ("--include-operation-id", operation)]
        results = [schemathesis(environment, "1/3 (seed kept)", keep),
                   schemathesis(environment, "2/3 (seed changed)", changes),
                   schemathesis(environment, "3/3 (seed deleted)", deletes)]
        if herald.process.poll() is not None:
            print(f"conformance: herald died: {herald.tail()}", file=sys.stderr)
            return 1
        return 0 if all(results) else 1
    finally:
        herald.stop()
        apple.stop()


if __name__ == "__main__":
    sys.exit(main())
