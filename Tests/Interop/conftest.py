"""Fixtures for the interop stage: a fake Apple (fakeapple.py: a key + JWKS on loopback), a fake
Google (fakegoogle.py, the same for Google's ID tokens), the real `herald serve` binary on a free
loopback port, and a realm configured through the admin API.

Environment: HERALD_BIN (path to the herald executable, required)."""
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import uuid

import pytest
import requests

import fakeapple
import fakegoogle

REALM = "interop"
APPLE_AUDIENCE = "com.example.interop.ios"
APPLE_SUBJECT = "001234.interop.0001"
APPLE_EMAIL = "interop@example.com"
LOGIN_URL = "https://login.interop.example/start"


class Herald:
    """A `herald serve` process with its own SQLite file, and admin calls against it."""

    def __init__(self, binary, apple_url, google_url):
        self.folder = tempfile.mkdtemp(prefix="herald-interop-")
        self.admin_token = secrets.token_urlsafe(32)
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, HERALD_ADMIN_TOKEN=self.admin_token, HERALD_LOG_LEVEL="warning")
        self.log = open(os.path.join(self.folder, "herald.log"), "wb")
        self.process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--public-url", self.base,
             "--database", f"sqlite:{self.folder}/herald.db", "--apple-jwks-url", apple_url,
             "--google-jwks-url", google_url],
            env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"herald exited with {self.process.returncode}: {self.read_log()}")
            try:
                if requests.get(self.base + "/healthz", timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("herald did not become healthy: " + self.read_log())
            time.sleep(0.1)  # polling for start-up, not papering over a race

    def read_log(self):
        with open(os.path.join(self.folder, "herald.log"), "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    def admin(self, method, path, body=None):
        response = requests.request(method, self.base + path, json=body, timeout=10,
                                    headers={"Authorization": f"Bearer {self.admin_token}"})
        assert response.status_code in (200, 201), f"{method} {path}: {response.status_code} {response.text}"
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


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Realm:
    """The realm the tests use: Apple enabled, a public SPA client, two confidential backends
    and a confidential resource server that introspects."""

    def __init__(self, herald, apple):
        self.herald = herald
        self.apple = apple
        self.issuer = f"{herald.base}/api/oauth/{REALM}"
        herald.admin("POST", "/api/admin/realms", {"id": REALM, "loginUrl": LOGIN_URL})
        herald.admin("PUT", f"/api/admin/realms/{REALM}/providers/apple",
                     {"enabled": True, "clientId": "com.example.interop.web", "audiences": [APPLE_AUDIENCE]})
        self.secrets = {}
        for client_id, confidential, redirect in [
            ("spa", False, "https://spa.example/callback"),
            ("backend", True, "https://backend.example/callback"),
            ("other", True, "https://other.example/callback"),
            ("resource-server", True, "https://rs.example/unused"),
        ]:
            created = herald.admin("POST", f"/api/admin/realms/{REALM}/clients", {
                "clientId": client_id, "name": client_id, "confidential": confidential, "redirectUris": [redirect],
                "allowedScopes": ["openid", "profile", "email"]})
            self.secrets[client_id] = created.get("clientSecret")
        self.redirects = {"spa": "https://spa.example/callback", "backend": "https://backend.example/callback",
                          "other": "https://other.example/callback"}

    def native_login(self, downstream_state, client_id):
        """What the iOS app does: native login with Apple's token and the downstream state."""
        raw_nonce = "raw-" + uuid.uuid4().hex
        response = requests.post(f"{self.issuer}/apple/native-login", timeout=10, json={
            "identityToken": self.apple.identity_token(APPLE_AUDIENCE, APPLE_SUBJECT, raw_nonce, email=APPLE_EMAIL),
            "clientId": client_id, "nonce": raw_nonce,
            "downstreamState": downstream_state, "fullName": {"givenName": "Interop", "familyName": "Tester"}})
        return response


@pytest.fixture(scope="session")
def apple():
    fake = fakeapple.FakeApple(kid="interop-rsa-1")
    yield fake
    fake.stop()


@pytest.fixture(scope="session")
def google():
    fake = fakegoogle.FakeGoogle(kid="interop-google-rsa-1")
    yield fake
    fake.stop()


@pytest.fixture(scope="session")
def herald(apple, google):
    binary = os.environ.get("HERALD_BIN")
    if not binary:
        pytest.fail("HERALD_BIN must name the herald executable")
    server = Herald(binary, apple.url, google.jwks_url)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def realm(herald, apple):
    return Realm(herald, apple)
