"""A fake Sign in with Apple for the Python drivers of the real binary: an RSA-2048 key, its
JWKS served on 127.0.0.1, and RS256 identity tokens shaped like Apple's.

Shared by the interop stage (conftest.py, beside this file) and the benchmark
(bench/scenarios/run.py, which puts this folder on sys.path). Needs only `cryptography`, so
both can import it without packaging."""
import base64
import hashlib
import http.server
import json
import threading
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

ISSUER = "https://appleid.apple.com"


def b64url(data):
    """Base64url without padding, as JOSE writes it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rsa_jwk(key, kid):
    """The public JWK (RS256, signing) of an RSA private key, under `kid`."""
    numbers = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
            "e": b64url(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big"))}


def identity_token(key, kid, audience, sub, raw_nonce, email=None, email_verified=True, lifetime=600):
    """An identity token for `sub` signed with `key` (an RSA private key) under `kid`. Its nonce
    claim is the SHA-256 hex of `raw_nonce`, as for an app that sends Apple the hashed nonce;
    `email` (with `email_verified`, a boolean or Apple's string form) is optional."""
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": audience, "sub": sub, "iat": now, "exp": now + lifetime, "auth_time": now,
              "nonce": hashlib.sha256(raw_nonce.encode()).hexdigest(), "nonce_supported": True}
    if email:
        claims.update(email=email, email_verified=email_verified)
    header = b64url(json.dumps({"alg": "RS256", "kid": kid}, separators=(",", ":")).encode())
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    signature = key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{payload}.{b64url(signature)}"


class FakeApple:
    """A fresh RSA key under `kid` whose JWKS is served at `url` until `stop()`."""

    def __init__(self, kid):
        self.kid = kid
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        document = json.dumps({"keys": [rsa_jwk(self.key, kid)]}).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server naming)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(document)))
                self.end_headers()
                self.wfile.write(document)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/auth/keys"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def identity_token(self, audience, sub, raw_nonce, **options):
        """An identity token signed with this key (`options` as for `identity_token`)."""
        return identity_token(self.key, self.kid, audience, sub, raw_nonce, **options)

    def private_pem(self):
        """The private key as PKCS#8 PEM, for worker processes that sign in parallel."""
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
