"""A partner backend signing its users in with Herald: OAuth 2.0 authorization code + PKCE (S256)
and OpenID Connect, with authlib (a standard client library) and nothing Herald-specific.

    pip install authlib==1.6.5 requests==2.32.5
    HERALD_ISSUER=https://id.acme.example/api/oauth/acme CLIENT_ID=acme-backend CLIENT_SECRET=… \
    REDIRECT_URI=https://app.acme.example/oauth/callback python3 partner_backend.py

It prints the address to send the browser to, then reads the callback URL the browser arrived
at (paste it) and prints the signed-in user's verified ID-token claims. In a web framework,
`start` runs in the login route (keep `saved` in the browser's session) and `finish` in the
callback route. Tests/Docs/run.sh runs this file against the real server."""
import os
import sys
from urllib.parse import parse_qsl, urlsplit

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt


class PartnerBackend:
    def __init__(self, issuer, client_id, client_secret, redirect_uri):
        self.metadata = requests.get(issuer + "/.well-known/openid-configuration", timeout=10).json()
        if self.metadata["issuer"] != issuer:
            raise ValueError("the discovery document names another issuer")
        self.client_id = client_id
        self.client = OAuth2Session(client_id, client_secret, scope="openid email profile",
                                    redirect_uri=redirect_uri, code_challenge_method="S256",
                                    token_endpoint_auth_method="client_secret_basic")

    def start(self):
        """The /authorize URL to redirect the browser to, and what to keep in its session."""
        verifier, nonce = generate_token(64), generate_token(24)
        url, state = self.client.create_authorization_url(self.metadata["authorization_endpoint"],
                                                          code_verifier=verifier, nonce=nonce)
        return url, {"state": state, "verifier": verifier, "nonce": nonce}

    def finish(self, callback_url, saved):
        """On the callback: checks `iss` (RFC 9207) and `state`, exchanges the code with the PKCE
        verifier, and verifies the ID token against the realm's keys. Answers (claims, tokens)."""
        query = dict(parse_qsl(urlsplit(callback_url).query))
        if query.get("iss") != self.metadata["issuer"]:
            raise ValueError("the callback comes from another issuer")
        if "error" in query:  # e.g. invalid_scope, access to this client refused
            raise ValueError(f"authorization failed: {query['error']}: {query.get('error_description')}")
        tokens = self.client.fetch_token(self.metadata["token_endpoint"], authorization_response=callback_url,
                                         state=saved["state"], code_verifier=saved["verifier"])
        keys = JsonWebKey.import_key_set(requests.get(self.metadata["jwks_uri"], timeout=10).json())
        claims = jwt.decode(tokens["id_token"], keys, claims_options={
            "iss": {"essential": True, "value": self.metadata["issuer"]},
            "aud": {"essential": True, "value": self.client_id},
            "nonce": {"essential": True, "value": saved["nonce"]}})
        claims.validate(leeway=60)
        return claims, tokens


if __name__ == "__main__":
    backend = PartnerBackend(os.environ["HERALD_ISSUER"], os.environ["CLIENT_ID"], os.environ["CLIENT_SECRET"],
                             os.environ["REDIRECT_URI"])
    url, saved = backend.start()
    print("Open in the browser:", url)
    callback = input("Paste the callback URL: ").strip()
    claims, _ = backend.finish(callback, saved)
    print({name: claims.get(name) for name in ("sub", "email", "email_verified", "name")}, file=sys.stdout)
