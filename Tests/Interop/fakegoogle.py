"""A fake Google for the Python drivers of the real binary: an RSA-2048 key, its JWKS served on
127.0.0.1 at Google's path (/oauth2/v3/certs), and RS256 ID tokens shaped like the ones Google
Identity Services, Credential Manager (Android) and GoogleSignIn (iOS) hand an app.

Unlike Apple, Google carries the app's nonce verbatim (not its SHA-256), writes `iss` with or
without the scheme, and names the requesting client in `azp`.

Used by the interop stage (conftest.py, beside this file) and by the browser stage's fake Google
Identity Services (Tests/Browser/fakegoogle_web.py, which puts this folder on sys.path). Needs
only `cryptography`."""
import http.server
import json
import secrets
import threading
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from fakeapple import b64url, rsa_jwk

ISSUER = "https://accounts.google.com"
JWKS_PATH = "/oauth2/v3/certs"


class GoogleKeys:
    """Google's signing key under `kid`: its JWKS document and the ID tokens it signs."""

    def __init__(self, kid):
        self.kid = kid
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.jwks_document = json.dumps({"keys": [rsa_jwk(self.key, kid)]}).encode()

    def claims(self, client_id, sub, nonce, email=None, email_verified=True, name=None, lifetime=600):
        """Google's claim set for `client_id` (as `aud` and `azp`); `nonce` as given (None: no claim)."""
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": client_id, "azp": client_id, "sub": sub, "iat": now, "exp": now + lifetime,
                  "jti": secrets.token_hex(16)}
        if nonce is not None:
            claims["nonce"] = nonce
        if email:
            claims.update(email=email, email_verified=email_verified)
        if name:
            given, _, family = name.partition(" ")
            claims.update(name=name, given_name=given, family_name=family,
                          picture="https://lh3.googleusercontent.com/a/fake-picture")
        return claims

    def sign(self, claims, kid=None):
        """A compact RS256 JWS of `claims` under this key (and `kid`, default this key's)."""
        header = b64url(json.dumps({"alg": "RS256", "kid": kid or self.kid, "typ": "JWT"},
                                   separators=(",", ":")).encode())
        payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
        signature = self.key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{header}.{payload}.{b64url(signature)}"

    def id_token(self, client_id, sub, nonce, **options):
        """A signed ID token (`options` as for `claims`)."""
        return self.sign(self.claims(client_id, sub, nonce, **options))


class FakeGoogle(GoogleKeys):
    """A fresh key under `kid` whose JWKS is served at `jwks_url` until `stop()`."""

    def __init__(self, kid):
        super().__init__(kid)
        document = self.jwks_document

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server naming)
                if self.path != JWKS_PATH:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "public, max-age=3600")
                self.send_header("Content-Length", str(len(document)))
                self.end_headers()
                self.wfile.write(document)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.jwks_url = f"http://127.0.0.1:{self.server.server_address[1]}{JWKS_PATH}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
