"""Sign in with Google's native login against the real herald binary, with a standard OAuth
client library: branch A (the app's own session, plain requests), branch B (authlib's
OAuth2Session: /authorize with PKCE → the app's Google login with downstreamState → authlib's
fetch_token), and a refusal. Google is fakegoogle.py: its JWKS on loopback, tokens it signs."""
import urllib.parse
import uuid

import pytest
import requests
from authlib.common.security import generate_token

from conftest import LOGIN_URL, REALM
from test_interop import authorize, discovery, session_for, validate_jwt

GOOGLE_WEB = "123456789012-interopweb.apps.googleusercontent.com"
GOOGLE_ANDROID = "123456789012-interopandroid.apps.googleusercontent.com"
FIRST_PARTY = "google-app"


@pytest.fixture(scope="module")
def google_realm(realm):
    """The interop realm with Google enabled for a web and an Android client id, and a first-party
    public client (the realm's own app, which may take branch A)."""
    realm.herald.admin("PUT", f"/api/admin/realms/{REALM}/providers/google",
                       {"enabled": True, "clientIds": [GOOGLE_WEB, GOOGLE_ANDROID], "hostedDomain": None})
    realm.herald.admin("POST", f"/api/admin/realms/{REALM}/clients", {
        "clientId": FIRST_PARTY, "name": "Google app", "firstParty": True,
        "redirectUris": ["https://app.interop.example/done"]})
    return realm


def google_login(realm, google, client_id, sub, audience=GOOGLE_ANDROID, downstream_state=None, **claims):
    """What an Android app does with Credential Manager's ID token: POST it with the raw nonce."""
    nonce = "raw-" + uuid.uuid4().hex
    token_claims = google.claims(audience, sub, nonce, email=f"{sub}@gmail.example", name="Grace Hopper")
    token_claims.update(claims)
    body = {"idToken": google.sign(token_claims), "clientId": client_id, "nonce": nonce}
    if downstream_state is not None:
        body["downstreamState"] = downstream_state
    return requests.post(f"{realm.issuer}/google/native-login", json=body, timeout=10)


def accounts(realm):
    return realm.herald.admin("GET", f"/api/admin/realms/{REALM}/accounts")["items"]


def test_branch_a_first_party_session(google_realm, google):
    sub = "1" + str(uuid.uuid4().int)[:20]
    first = google_login(google_realm, google, FIRST_PARTY, sub)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["tokenType"] == "Bearer" and body["isNewUser"] is True
    for field in ("accessToken", "refreshToken", "userId"):
        assert body[field]
    user = body["user"]
    assert user["email"] == f"{sub}@gmail.example" and user["emailVerified"] is True
    assert user["name"]["givenName"] == "Grace"
    assert [identity["provider"] for identity in user["identities"]] == ["google"]

    me = requests.get(f"{google_realm.herald.base}/api/auth/{REALM}/me", timeout=10,
                      headers={"Authorization": f"Bearer {body['accessToken']}"})
    assert me.status_code == 200, me.text

    # The same Google account, from the web client id and with iss spelled without the scheme,
    # lands on the same Herald account.
    again = google_login(google_realm, google, FIRST_PARTY, sub, audience=GOOGLE_WEB, iss="accounts.google.com")
    assert again.status_code == 200, again.text
    assert again.json()["userId"] == body["userId"] and again.json()["isNewUser"] is False


def test_branch_b_with_authlib(google_realm, google):
    metadata = discovery(google_realm)
    session = session_for(google_realm, "backend")
    verifier = generate_token(64)
    nonce = generate_token(16)
    response, state = authorize(google_realm, session, metadata, verifier, nonce=nonce)
    assert response.status_code == 302, response.text
    location = response.headers["Location"]
    assert location.startswith(LOGIN_URL + "?")
    downstream = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)["downstreamState"][0]

    sub = "2" + str(uuid.uuid4().int)[:20]
    login = google_login(google_realm, google, "backend", sub, downstream_state=downstream)
    assert login.status_code == 200, login.text
    assert set(login.json()) == {"redirectUri"}  # no session for the app in branch B
    callback = login.json()["redirectUri"]
    assert callback.startswith(google_realm.redirects["backend"] + "?")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(callback).query)
    assert query["state"] == [state] and query["iss"] == [metadata["issuer"]]

    token = session.fetch_token(metadata["token_endpoint"], authorization_response=callback, state=state,
                                code_verifier=verifier)
    access = validate_jwt(token["access_token"], metadata, "backend", expected_typ="at+jwt")
    id_claims = validate_jwt(token["id_token"], metadata, "backend")
    assert id_claims["nonce"] == nonce and id_claims["sub"] == access["sub"]
    assert id_claims["email"] == f"{sub}@gmail.example" and id_claims["email_verified"] is True
    userinfo = session.get(metadata["userinfo_endpoint"])
    assert userinfo.status_code == 200 and userinfo.json()["sub"] == access["sub"]


def test_wrong_audience_is_refused_and_changes_nothing(google_realm, google):
    before = accounts(google_realm)
    sub = "3" + str(uuid.uuid4().int)[:20]
    other = "999999999999-someoneelse.apps.googleusercontent.com"
    response = google_login(google_realm, google, FIRST_PARTY, sub, audience=other)
    assert response.status_code == 401, response.text
    error = response.json()
    assert error["code"] == "invalid_google_token", error
    assert error["details"]["reason"] == "audience", error
    assert accounts(google_realm) == before
