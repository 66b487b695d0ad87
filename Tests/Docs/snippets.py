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
