"""The check of each doc-test snippet (by name), and the checks of the config files the docs ship.

`@snippet(NAME, setup=…)` registers a check: `setup(context)` prepares what the snippet needs and
returns extra environment variables for it; the check gets the snippet's `Result` (rc, out, err)
and raises when the answer is not the one the doc shows."""
import json
import os

import requests

CHECKS = {}
FILE_CHECKS = []


def snippet(name, setup=None):
    def register(verify):
        CHECKS[name] = (setup, verify)
        return verify
    return register


def file_check(function):
    FILE_CHECKS.append(function)
    return function


def ok(result):
    assert result.rc == 0, repr(result)
    return result


def body(result):
    """The snippet's output as one JSON value."""
    ok(result)
    try:
        return json.loads(result.out)
    except json.JSONDecodeError as error:
        raise AssertionError(f"not JSON ({error}): {result!r}")


def status_line(result):
    """The status code of the first response of a `curl -i` output."""
    ok(result)
    first = result.out.split("\r\n", 1)[0]
    return int(first.split()[1])


def headers(result):
    head = result.out.split("\r\n\r\n", 1)[0]
    return {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in head.split("\r\n")[1:] if ":" in line}


def response_body(result):
    return json.loads(result.out.split("\r\n\r\n", 1)[1])


def prepare(context):
    """Realm `acme` and the iOS app's client, as README "Configure a realm" leaves them."""
    herald = context.herald
    herald.admin("POST", "/api/admin/realms", {"id": "acme", "loginUrl": "https://login.acme.example/apple"})
    herald.admin("POST", "/api/admin/realms/acme/clients",
                 {"clientId": "acme-ios", "name": "Acme for iOS", "firstParty": True})


# docs/apple-setup.md

@snippet("apple-provider-put")
def _(result, context):
    answer = body(result)
    assert answer["clientId"] == "com.acme.web" and answer["audiences"] == ["com.acme.ios"], answer
    assert answer["privateKeyConfigured"] is True and "privateKey" not in answer, answer
    assert answer["returnUrls"] == [context.herald.base + "/api/oauth/acme/apple/callback"], answer


@snippet("apple-provider-get")
def _(result, context):
    answer = body(result)
    for field, value in {"clientId": "com.acme.web", "teamId": "TEAMWEB123", "keyId": "KEYWEB4567",
                         "privateKeyConfigured": True, "enabled": True, "scopes": ["name", "email"]}.items():
        assert answer[field] == value, (field, answer)
    assert "privateKey" not in answer


@snippet("apple-return-url-refused")
def _(result, context):
    answer = body(result)
    assert answer["status"] == 400 and answer["code"] == "bad_request", answer
    assert "returnUrls[0]" in answer["details"]["fields"], answer
    # and nothing changed
    stored = context.herald.admin("GET", "/api/admin/realms/acme/providers/apple")
    assert stored["privateKeyConfigured"] is True and stored["audiences"] == ["com.acme.ios"], stored


@snippet("fake-native-login")
def _(result, context):
    answer = body(result)
    assert answer["message"] == "Login successful" and answer["isNewUser"] is True, answer
    assert answer["user"]["name"]["givenName"] == "Jane" and answer["user"]["email"] == "jane@example.com", answer
    context.values["first_account"] = answer["userId"]
    wait_for(lambda: 'herald_apple_calls_total{operation="token_exchange",outcome="success"} 1' in context.metrics(),
             "the authorization code exchanged at the fake Apple")


@snippet("fake-notification")
def _(result, context):
    assert body(result) == {"outcome": "applied", "type": "email-disabled"}, result.out


def wait_for(condition, what, seconds=10):
    import time
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Skip(Exception):
    """The snippet documents a route this binary does not serve yet (said in the stage's output)."""


def login(context, code=False, sub=None):
    """A fresh first-party session, as the iOS app gets it."""
    return context.native_login(sub=sub, code=code)


# docs/ios-quickstart.md

def _fresh_credential(context):
    nonce, token, code = context.credential(sub="001234.quickstart.0001", code=True)
    return {"NONCE": nonce, "TOKEN": token, "CODE": code}


@snippet("quickstart-native-login", setup=_fresh_credential)
def _(result, context):
    answer = body(result)
    assert answer["message"] == "Login successful" and answer["isNewUser"] is True, answer
    assert answer["tokenType"] == "Bearer" and answer["user"]["name"]["familyName"] == "Doe", answer
    context.values["refresh"] = answer["refreshToken"]


@snippet("quickstart-refresh", setup=lambda context: {"REFRESH": context.values["refresh"]})
def _(result, context):
    answer = body(result)
    assert answer["message"] == "Token refreshed" and answer["isNewUser"] is False, answer
    assert answer["refreshToken"] != context.values["refresh"], "the refresh token was not rotated"
    context.values["old_refresh"] = context.values["refresh"]


@snippet("quickstart-refresh-reused", setup=lambda context: {"OLD_REFRESH": context.values["old_refresh"]})
def _(result, context):
    answer = body(result)
    assert answer["status"] == 401 and answer["code"] == "refresh_token_revoked", answer


def _fresh_session(context):
    session = login(context)
    context.values["session"] = session
    return {"ACCESS": session["accessToken"], "REFRESH": session["refreshToken"]}


@snippet("quickstart-logout", setup=_fresh_session)
def _(result, context):
    assert body(result) == {"message": "Logged out"}, result.out
    after = requests.post(context.herald.base + "/api/auth/acme/session/refresh", timeout=10,
                          json={"refreshToken": context.values["session"]["refreshToken"], "clientId": "acme-ios"})
    assert after.status_code == 401 and after.json()["code"] == "refresh_token_revoked", after.text


def _session_with_apple_token(context):
    before = _apple_calls(context, "token_exchange", "success")
    session = context.native_login(sub="001234.delete.0001", code=True)
    wait_for(lambda: _apple_calls(context, "token_exchange", "success") > before, "the authorization code exchanged")
    context.values["deleted_session"] = session
    return {"ACCESS": session["accessToken"]}


def _apple_calls(context, operation, outcome):
    """herald_apple_calls_total{operation,outcome} as /metrics shows it (0 before the first)."""
    for line in context.metrics().splitlines():
        if line.startswith(f'herald_apple_calls_total{{operation="{operation}",outcome="{outcome}"}} '):
            return int(line.rsplit(" ", 1)[1])
    return 0


@snippet("quickstart-delete", setup=_session_with_apple_token)
def _(result, context):
    answer = body(result)
    if answer.get("status") in (404, 405) and answer.get("code") in ("not_found", "method_not_allowed"):
        raise Skip("DELETE /api/auth/{realm}/me is not served by this build")
    assert answer == {"deleted": True, "appleTokenRevocation": "queued"}, answer
    wait_for(lambda: _apple_calls(context, "revoke", "success") >= 1, "the Apple token revoked at the fake Apple")
    session = context.values["deleted_session"]
    me = requests.get(context.herald.base + "/api/auth/acme/me", timeout=10,
                      headers={"Authorization": "Bearer " + session["accessToken"]})
    assert me.status_code == 401, me.text
    again = context.native_login(sub="001234.delete.0001")
    assert again["isNewUser"] is True and again["userId"] != session["userId"], again


# docs/troubleshooting.md

def _error(result):
    answer = body(result)
    assert set(answer) >= {"status", "code", "message", "requestId"}, answer
    return answer


@snippet("trouble-audience")
def _(result, context):
    answer = _error(result)
    assert (answer["status"], answer["code"], answer["details"]) == (401, "invalid_apple_token", {"reason": "audience"}), answer


@snippet("trouble-nonce")
def _(result, context):
    answer = _error(result)
    assert (answer["status"], answer["code"], answer["details"]) == (401, "invalid_apple_token", {"reason": "nonce"}), answer


@snippet("trouble-replayed")
def _(result, context):
    assert ok(result).out.split() == ["200", "401"], result.out


@snippet("trouble-events")
def _(result, context):
    items = body(result)["items"]
    assert [(item["type"], item["reason"]) for item in items] == [
        ("login.failed", "replayed"), ("login.failed", "nonce"), ("login.failed", "audience")], items


@snippet("trouble-metrics")
def _(result, context):
    lines = ok(result).out.splitlines()
    for reason in ("audience", "nonce", "replayed"):
        assert f'herald_logins_total{{provider="apple",door="native",outcome="rejected",reason="{reason}"}} 1' in lines, lines


def _realm_with_wrong_key(context):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    herald = context.herald
    herald.admin("POST", "/api/admin/realms", {"id": "acme-wrong-key"})
    herald.admin("PUT", "/api/admin/realms/acme-wrong-key/providers/apple", {
        "clientId": "com.acme.web", "audiences": ["com.acme.ios"], "teamId": "TEAMWEB123", "keyId": "KEYWEB4567",
        "privateKey": other})
    herald.admin("POST", "/api/admin/realms/acme-wrong-key/clients",
                 {"clientId": "acme-ios", "name": "Acme for iOS", "firstParty": True})
    context.native_login(realm="acme-wrong-key", sub="001234.wrongkey.0001", code=True)
    wait_for(lambda: _apple_calls(context, "token_exchange", "invalid_client") >= 1, "Apple refusing the exchange")
    return {}


@snippet("trouble-invalid-client", setup=_realm_with_wrong_key)
def _(result, context):
    items = body(result)["items"]
    assert len(items) == 1, items
    event = items[0]
    assert (event["type"], event["reason"], event["actor"], event["clientId"]) == (
        "apple.code_exchange_refused", "invalid_client", "apple", "com.acme.ios"), event


@snippet("trouble-notification")
def _(result, context):
    answer = _error(result)
    assert (answer["status"], answer["code"], answer["details"]) == (400, "invalid_notification", {"reason": "malformed"}), answer


def _widget_token(context):
    nonce, token, _ = context.credential(sub="001234.docs.0003", aud="com.acme.ios.widget")
    return {"NONCE": nonce, "TOKEN": token}


@snippet("trouble-diagnose", setup=_widget_token)
def _(result, context):
    ok(result)
    assert result.out.rstrip().endswith("exit 1"), repr(result)
    assert "audience" in result.out, repr(result)


# docs/third-party.md

@snippet("partner-register", setup=lambda context: (
    context.herald.admin("DELETE", "/api/admin/realms/acme/clients/acme-backend", expect=(200, 204, 404)), {})[1])
def _(result, context):
    answer = body(result)
    assert answer["clientId"] == "acme-backend" and answer["confidential"] is True, answer
    assert answer["clientSecret"], "the secret is shown once, at creation"
    assert answer["redirectUris"] == ["https://app.acme.example/oauth/callback"], answer
    context.values["partner_secret"] = answer["clientSecret"]


def _partner_env(context):
    return {"CLIENT_SECRET": context.values["partner_secret"]}


def partner_backend(context):
    import importlib.util
    spec = importlib.util.spec_from_file_location("partner_backend",
                                                  os.path.join(context.root, "docs/examples/partner_backend.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PartnerBackend(context.herald.base + "/api/oauth/acme", "acme-backend",
                                 context.values["partner_secret"], "https://app.acme.example/oauth/callback")


def partner_sign_in_native(context, sub):
    """The native path: /authorize with Accept: application/json, then the app's native login."""
    backend = partner_backend(context)
    url, saved = backend.start()
    pending = requests.get(url, headers={"Accept": "application/json"}, allow_redirects=False, timeout=10)
    assert pending.status_code == 200, pending.text
    login = context.native_login(sub=sub, client="acme-backend", downstream=pending.json()["downstreamState"])
    return backend.finish(login["redirectUri"], saved)


@file_check
def partner_example_native_path(context):
    claims, tokens = partner_sign_in_native(context, context.apple.subject)
    # the same person as the first-party app's sign-in in apple-setup.md: the same sub for every client
    assert claims["sub"] == context.values["first_account"], (claims["sub"], context.values["first_account"])
    assert claims["email"] == "jane@example.com" and claims["aud"] == "acme-backend", claims
    assert tokens["token_type"] == "Bearer" and tokens["refresh_token"], tokens


@file_check
def partner_example_browser_path(context):
    """The browser path without the app: /authorize → loginUrl → Herald's web flow → the fake
    Apple's page → form_post → the page's link to the backend's redirect URI."""
    import html
    import re
    from urllib.parse import parse_qs, urlsplit
    backend = partner_backend(context)
    url, saved = backend.start()
    to_login = requests.get(url, allow_redirects=False, timeout=10)
    assert to_login.status_code == 302 and to_login.headers["Location"].startswith("https://login.acme.example/apple?")
    downstream = parse_qs(urlsplit(to_login.headers["Location"]).query)["downstreamState"][0]
    start = requests.get(context.herald.base + "/api/oauth/acme/apple/login", allow_redirects=False, timeout=10,
                         params={"clientId": "acme-backend", "downstreamState": downstream})
    assert start.status_code == 302, start.text
    # The __Host- cookie is Secure; a browser sends it to a loopback http origin, requests does not: by hand.
    cookie = start.headers["Set-Cookie"].split(";", 1)[0]
    page = requests.get(start.headers["Location"], timeout=10).text
    form = re.search(r'<form method="post" action="([^"]+)">(.*?)</form>', page, re.S)
    fields = {html.unescape(name): html.unescape(value)
              for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', form.group(2))}
    result = requests.post(html.unescape(form.group(1)), data=fields, headers={"Cookie": cookie}, timeout=10)
    assert result.status_code == 200, result.text
    answer = json.loads(re.search(r'<script type="application/json" id="herald-login-result">(.*?)</script>',
                                  result.text, re.S).group(1))
    claims, _ = backend.finish(answer["redirectUri"], saved)
    assert claims["sub"] == context.values["first_account"], claims


@snippet("partner-subject-type")
def _(result, context):
    assert ok(result).out.strip() == "['public']", result.out


def _partner_session_then_deleted(context):
    claims, tokens = partner_sign_in_native(context, "001234.partner.0001")
    context.herald.admin("DELETE", f"/api/admin/realms/acme/accounts/{claims['sub']}", expect=(200, 204))
    return {"CLIENT_SECRET": context.values["partner_secret"], "REFRESH": tokens["refresh_token"],
            "ACCESS": tokens["access_token"], "_sub": claims["sub"]}


def _after_delete_setup(context):
    extra = _partner_session_then_deleted(context)
    context.values["deleted_partner_sub"] = extra.pop("_sub")
    return extra


@snippet("partner-after-delete", setup=_after_delete_setup)
def _(result, context):
    lines = [line for line in ok(result).out.splitlines() if line.strip()]
    assert json.loads(lines[0]) == {"error": "invalid_grant",
                                    "error_description": "refresh token is invalid, expired or revoked"}, lines
    assert lines[1] == '401 Bearer realm="acme", error="invalid_token"', lines
    assert json.loads(lines[2]) == {"active": False}, lines
    claims, _ = partner_sign_in_native(context, "001234.partner.0001")
    assert claims["sub"] != context.values["deleted_partner_sub"], "a new sign-in after deletion is a new account"


@snippet("partner-authorize-error")
def _(result, context):
    status, location = ok(result).out.split()
    assert status == "302", result.out
    assert location.startswith("https://app.acme.example/oauth/callback?error=invalid_request&error_description="), location
    assert "&state=s1&iss=" in location, location


@snippet("partner-invalid-grant", setup=_partner_env)
def _(result, context):
    assert body(result) == {"error": "invalid_grant", "error_description": "authorization code is invalid"}, result.out


def _rate_limited_herald(context):
    herald = context.start_herald(env={"HERALD_RATE_LIMIT_PER_IP": "2/60"})
    secret = context.configure_realm(herald)
    return {"_herald": herald, "CLIENT_SECRET": secret}


@snippet("partner-rate-limited", setup=_rate_limited_herald)
def _(result, context):
    lines = ok(result).out.splitlines()
    assert lines[:2] == ["400 retry-after=", "400 retry-after="], lines
    status, retry = lines[2].split()
    assert status == "429" and int(retry.split("=")[1]) >= 1, lines
