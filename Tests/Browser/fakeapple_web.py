"""A fake Sign in with Apple web flow on 127.0.0.1 for the browser stage: Apple's JWKS, an
authorize page a real browser submits (Continue or Cancel, posted back with
response_mode=form_post), the token endpoint (which checks Herald's ES256 client secret
against the realm's .p8 key, like Apple) and the revoke endpoint.

Builds on Tests/Interop/fakeapple.py (the RSA key, JWKS and identity-token minting)."""
import base64
import html
import http.server
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, utils

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Interop"))
import fakeapple  # noqa: E402

TEAM_ID = "TEAMWEB123"
KEY_ID = "KEYWEB4567"


def _b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class FakeAppleWeb:
    """Apple's authorize, token, revoke and keys endpoints; `p8` is the key Herald must sign with."""

    def __init__(self, subject="000999.browser.user", email="browser@example.com"):
        self.keys = fakeapple.FakeApple(kid="browser-rsa-1")  # JWKS + identity tokens
        self.p8_key = ec.generate_private_key(ec.SECP256R1())
        self.p8 = self.p8_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()).decode()
        self.subject, self.email = subject, email
        numbers = self.keys.key.public_key().public_numbers()
        self.jwks_document = json.dumps({"keys": [{
            "kty": "RSA", "kid": self.keys.kid, "use": "sig", "alg": "RS256",
            "n": fakeapple.b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
            "e": fakeapple.b64url(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big"))}]}).encode()
        self.codes = {}  # code -> id_token
        self.calls = []  # (path, form, secret_valid)
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                url = urllib.parse.urlsplit(self.path)
                if url.path == "/auth/authorize":
                    fake._authorize(self, dict(urllib.parse.parse_qsl(url.query)))
                elif url.path == "/auth/keys":
                    self._send(200, "application/json", fake.jwks_document)
                else:
                    self._send(404, "text/plain", b"not found")

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                if self.path == "/fake/notify":
                    # Not Apple's: signs a server-to-server notification for trying Herald by hand.
                    request = json.loads(body)
                    self._send(200, "text/plain", fake.notification(request["type"], request["sub"], request["aud"]).encode())
                    return
                if self.path == "/fake/identity-token":
                    # Not Apple's either: what the iOS sheet hands an app, for trying native
                    # login by hand (docs/apple-setup.md, "Test against the fake Apple").
                    request = json.loads(body)
                    self._send(200, "application/json", json.dumps(fake.native_credential(**request)).encode())
                    return
                form = dict(urllib.parse.parse_qsl(body))
                valid = fake._secret_valid(form.get("client_secret"), form.get("client_id"))
                fake.calls.append((self.path, form, valid))
                if not valid:
                    self._send(400, "application/json", b'{"error":"invalid_client"}')
                elif self.path == "/auth/token":
                    id_token = fake.codes.pop(form.get("code"), None)
                    if id_token is None:
                        self._send(400, "application/json", b'{"error":"invalid_grant"}')
                    else:
                        body = json.dumps({"access_token": "a", "token_type": "Bearer", "expires_in": 3600,
                                           "refresh_token": "r-" + secrets.token_urlsafe(16), "id_token": id_token})
                        self._send(200, "application/json", body.encode())
                elif self.path == "/auth/revoke":
                    self._send(200, "text/plain", b"")
                else:
                    self._send(404, "text/plain", b"not found")

            def _send(self, status, content_type, body):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def jwks_url(self):
        return self.base + "/auth/keys"

    def _authorize(self, handler, query):
        """Apple's consent page: Continue posts code + id_token + user, Cancel posts the error."""
        code = "c-" + secrets.token_urlsafe(16)
        now = int(time.time())
        claims = {"iss": fakeapple.ISSUER, "aud": query["client_id"], "sub": self.subject, "iat": now,
                  "exp": now + 600, "nonce": query["nonce"], "email": self.email, "email_verified": True}
        self.codes[code] = self._sign(claims)
        user = json.dumps({"name": {"firstName": "Grace", "lastName": "Hopper"}, "email": self.email})
        target = html.escape(query["redirect_uri"])
        state = html.escape(query["state"])

        def hidden(name, value):
            return f'<input type="hidden" name="{name}" value="{html.escape(value)}">'

        page = f"""<!DOCTYPE html><html><body><h1>Sign in with Apple (fake)</h1>
<form method="post" action="{target}">{hidden("state", query["state"])}{hidden("code", code)}
{hidden("id_token", self.codes[code])}{hidden("user", user)}<button id="continue">Continue</button></form>
<form method="post" action="{target}"><input type="hidden" name="state" value="{state}">
<input type="hidden" name="error" value="user_cancelled_authorize"><button id="cancel">Cancel</button></form>
</body></html>""".encode()
        handler._send(200, "text/html; charset=utf-8", page)

    def _sign(self, claims):
        header = fakeapple.b64url(json.dumps({"alg": "RS256", "kid": self.keys.kid}).encode())
        payload = fakeapple.b64url(json.dumps(claims).encode())
        signature = self.keys.key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{header}.{payload}.{fakeapple.b64url(signature)}"

    def notification(self, event_type, sub, audience):
        """A signed server-to-server notification payload, shaped like Apple's."""
        now = int(time.time())
        events = json.dumps({"type": event_type, "sub": sub, "event_time": now * 1000})
        return self._sign({"iss": fakeapple.ISSUER, "aud": audience, "iat": now, "jti": secrets.token_hex(16),
                           "events": events})

    def native_credential(self, aud, sub, nonce, email=None, code=False):
        """What ASAuthorizationAppleIDCredential carries: an identity token for the Bundle ID `aud`
        whose nonce claim is the SHA-256 hex of the raw `nonce`, and with `code` an authorization
        code this fake's /auth/token exchanges once for that token."""
        token = self.keys.identity_token(aud, sub, nonce, email=email)
        credential = {"identityToken": token}
        if code:
            credential["authorizationCode"] = "c-" + secrets.token_urlsafe(16)
            self.codes[credential["authorizationCode"]] = token
        return credential

    def _secret_valid(self, secret, client_id):
        """Apple's checks of a client secret: ES256 by the .p8 key, iss/sub/aud, unexpired."""
        try:
            header_b64, payload_b64, signature_b64 = secret.split(".")
            header, claims = json.loads(_b64decode(header_b64)), json.loads(_b64decode(payload_b64))
            raw = _b64decode(signature_b64)
            der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            self.p8_key.public_key().verify(der, f"{header_b64}.{payload_b64}".encode(), ec.ECDSA(hashes.SHA256()))
        except (AttributeError, ValueError, InvalidSignature, json.JSONDecodeError):
            return False
        now = time.time()
        return (header.get("alg") == "ES256" and header.get("kid") == KEY_ID and claims.get("iss") == TEAM_ID
                and claims.get("sub") == client_id and claims.get("aud") == "https://appleid.apple.com"
                and claims.get("exp", 0) > now and claims.get("iat", now + 120) <= now + 60)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.keys.stop()


if __name__ == "__main__":
    # By hand (README "Sign in with Apple"): run the fake Apple until Ctrl-C, with its .p8 key
    # written to the path given (Team ID TEAMWEB123, Key ID KEYWEB4567).
    import argparse
    parser = argparse.ArgumentParser(description="A fake Sign in with Apple on 127.0.0.1")
    parser.add_argument("--p8", required=True, help="where to write the fake .p8 key")
    arguments = parser.parse_args()
    fake = FakeAppleWeb()
    with open(arguments.p8, "w") as p8:
        p8.write(fake.p8)
    print(f"fake Apple: base {fake.base}  jwks {fake.jwks_url}  team {TEAM_ID}  key {KEY_ID}  p8 {arguments.p8}",
          flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.stop()
