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


def json_values(text):
    """The JSON values curl printed one after another (answers end without a newline)."""
    decoder, values, index = json.JSONDecoder(), [], 0
    while index < len(text):
        if text[index].isspace():
            index += 1
            continue
        value, index = decoder.raw_decode(text, index)
        values.append(value)
    return values


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
    assert me.status_code == 401 and me.json()["code"] == "account_deleted", me.text
    refresh = requests.post(context.herald.base + "/api/auth/acme/session/refresh", timeout=10,
                            json={"refreshToken": session["refreshToken"], "clientId": "acme-ios"})
    assert refresh.status_code == 401 and refresh.json()["code"] == "account_deleted", refresh.text
    retry = requests.delete(context.herald.base + "/api/auth/acme/me", timeout=10,
                            headers={"Authorization": "Bearer " + session["accessToken"]})
    assert retry.status_code == 200 and retry.json() == answer, retry.text  # idempotent
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


# docs/production.md

@snippet("prod-apple-egress", setup=lambda context: {"APPLE": context.apple.base})
def _(result, context):
    assert ok(result).out.strip() == "1 keys", result.out  # the fake publishes one key


@snippet("prod-backup", setup=lambda context: _backup_setup(context))
def _(result, context):
    assert ok(result).out.strip() == "ok", result.out
    backup = context.values["backup"]
    assert os.path.getsize(os.path.join(backup, "herald.db")) > 0
    assert open(os.path.join(backup, "herald.key")).read() == open(os.path.join(context.herald.folder, "herald.key")).read()


def _backup_setup(context):
    import tempfile
    # A session the restore must bring back: used before the backup, not after.
    context.values["before_backup"] = login(context, sub="001234.backup.0001")
    backup = tempfile.mkdtemp(prefix="backup-", dir=context.tmp)
    context.values["backup"] = backup
    return {"DATA": context.herald.folder, "BACKUP": backup}


def _restore_setup(context):
    """A fresh data folder and a `systemctl` that stops and starts Herald on it (same public URL,
    so tokens issued before the backup are for this issuer)."""
    import stat
    import tempfile
    data = tempfile.mkdtemp(prefix="restored-", dir=context.tmp)
    bin_dir = tempfile.mkdtemp(prefix="bin-", dir=context.tmp)
    port = context.free_port()
    context.values["restored"] = {"data": data, "port": port}
    shim = os.path.join(bin_dir, "systemctl")
    with open(shim, "w") as f:
        f.write(f"""#!/usr/bin/env bash
# Stands in for systemd in the docs stage: `systemctl stop|start herald` on the restored folder.
set -euo pipefail
pidfile={data}/herald.pid
case "$1 $2" in
  "stop herald") if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")"; while kill -0 "$(cat "$pidfile")" 2>/dev/null; do sleep 0.1; done; rm -f "$pidfile"; fi ;;
  "start herald") HERALD_LOG_LEVEL=warning HERALD_ADMIN_TOKEN={context.herald.admin_token} nohup {context.binary} serve \\
      --host 127.0.0.1 --port {port} --public-url {context.herald.base} --database sqlite:{data}/herald.db \\
      --apple-jwks-url {context.apple.jwks_url} --apple-base-url {context.apple.base} >>{data}/herald.log 2>&1 &
      echo $! > "$pidfile" ;;
  *) echo "systemctl shim: $*" >&2; exit 2 ;;
esac
""")
    os.chmod(shim, os.stat(shim).st_mode | stat.S_IEXEC)
    context.pidfiles.append(os.path.join(data, "herald.pid"))
    return {"DATA": data, "BACKUP": context.values["backup"], "HERALD": f"http://127.0.0.1:{port}",
            "PATH": bin_dir + os.pathsep + context.env()["PATH"]}


@snippet("prod-restore", setup=_restore_setup)
def _(result, context):
    assert ok(result).out.strip().endswith('{"status":"ready"}'), repr(result)
    restored = f"http://127.0.0.1:{context.values['restored']['port']}"
    original_keys = requests.get(context.herald.base + "/api/oauth/acme/jwks.json", timeout=10).json()
    assert requests.get(restored + "/api/oauth/acme/jwks.json", timeout=10).json() == original_keys
    session = context.values["before_backup"]
    me = requests.get(restored + "/api/auth/acme/me", headers={"Authorization": "Bearer " + session["accessToken"]},
                      timeout=10)
    assert me.status_code == 200 and me.json()["id"] == session["userId"], me.text
    refreshed = requests.post(restored + "/api/auth/acme/session/refresh", timeout=10,
                              json={"refreshToken": session["refreshToken"], "clientId": "acme-ios"})
    assert refreshed.status_code == 200, refreshed.text  # the restored database signs with the restored key


def _new_master_key_setup(context):
    """Herald on a copy of the backup under another master key, as the doc describes it before
    the snippet: it starts, still publishes the keys, and cannot sign until the key is rotated."""
    import secrets
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix="new-master-key-", dir=context.tmp)
    shutil.copy(os.path.join(context.values["backup"], "herald.db"), os.path.join(folder, "herald.db"))
    herald = context.start_herald(folder=folder, env={"HERALD_MASTER_KEY": secrets.token_hex(32)},
                                  args=("--public-url", context.herald.base))
    old = requests.get(herald.base + "/api/oauth/acme/jwks.json", timeout=10).json()
    assert old == requests.get(context.herald.base + "/api/oauth/acme/jwks.json", timeout=10).json()
    nonce, token, _ = context.credential(sub="001234.masterkey.0001")
    refused = requests.post(herald.base + "/api/oauth/acme/apple/native-login", timeout=10,
                            json={"identityToken": token, "clientId": "acme-ios", "nonce": nonce})
    assert refused.status_code == 500 and refused.json()["code"] == "internal_error", refused.text
    context.values["master_key"] = {"herald": herald, "old_kids": {key["kid"] for key in old["keys"]}}
    return {"_herald": herald}


@snippet("prod-master-key-rotation", setup=_new_master_key_setup)
def _(result, context):
    rotated, provider = json_values(ok(result).out)
    assert rotated["status"] == "active", rotated
    assert provider["privateKeyConfigured"] is True, provider
    herald = context.values["master_key"]["herald"]
    kids = {key["kid"] for key in requests.get(herald.base + "/api/oauth/acme/jwks.json", timeout=10).json()["keys"]}
    assert context.values["master_key"]["old_kids"] < kids and rotated["kid"] in kids, kids
    before = _apple_calls_on(herald, "token_exchange", "success")
    session = context.native_login(herald=herald, sub="001234.masterkey.0001", code=True)
    assert session["message"] == "Login successful", session
    wait_for(lambda: _apple_calls_on(herald, "token_exchange", "success") > before, "the new .p8 signing Apple's client secret")


def _apple_calls_on(herald, operation, outcome):
    text = requests.get(herald.base + "/metrics", timeout=10).text
    for line in text.splitlines():
        if line.startswith(f'herald_apple_calls_total{{operation="{operation}",outcome="{outcome}"}} '):
            return int(line.rsplit(" ", 1)[1])
    return 0


@snippet("prod-migrate-rehearsal", setup=lambda context: {"BACKUP": context.values["backup"]})
def _(result, context):
    assert ok(result).out.strip().endswith("no new migrations"), repr(result)


@snippet("prod-prometheus-scrape")
def _(block, context):
    import yaml
    config = yaml.safe_load(block.text)
    job = config["scrape_configs"][0]
    assert job["job_name"] == "herald", job
    env = _env_file(context)
    assert job["static_configs"][0]["targets"] == [env["HERALD_ADMIN_LISTEN"]], (job, env)
    assert config["rule_files"][0].endswith("/herald-alerts.yml"), config


def _env_file(context):
    values = {}
    for line in open(os.path.join(context.root, "docs/systemd/herald.env")):
        line = line.strip()
        if line and not line.startswith("#"):
            name, value = line.split("=", 1)
            values[name] = value
    return values


@file_check
def systemd_unit_verifies(context):
    import subprocess
    import tempfile
    unit = open(os.path.join(context.root, "docs/systemd/herald.service")).read()
    assert "ExecStart=/usr/local/bin/herald serve\n" in unit and "EnvironmentFile=/etc/herald/herald.env\n" in unit
    folder = tempfile.mkdtemp(prefix="systemd-", dir=context.tmp)
    path = os.path.join(folder, "herald.service")
    with open(path, "w") as f:  # the one change: the binary that exists here
        f.write(unit.replace("/usr/local/bin/herald", context.binary))
    checked = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and not checked.stderr.strip() and not checked.stdout.strip(), checked


@file_check
def environment_file_runs_herald(context):
    """Every name is one `herald serve` reads; Herald starts with the file (ports and the database
    path rewritten) and serves the admin side on the admin listener only."""
    import subprocess
    import tempfile
    values = _env_file(context)
    commented = [line.strip()[1:].split("=", 1)[0] for line in open(os.path.join(context.root, "docs/systemd/herald.env"))
                 if line.strip().startswith("#HERALD_")]
    settings = open(os.path.join(context.root, "Sources/HeraldServer/Configuration/HeraldConfiguration.swift")).read()
    for name in list(values) + commented:
        assert f'("{name}", ' in settings, f"{name} is not a setting of herald serve"
    folder = tempfile.mkdtemp(prefix="env-file-", dir=context.tmp)
    public, admin = context.free_port(), context.free_port()
    env = dict(os.environ, **values)
    env.update(HERALD_PORT=str(public), HERALD_ADMIN_LISTEN=f"127.0.0.1:{admin}",
               HERALD_DATABASE=f"sqlite:{folder}/herald.db", HERALD_APPLE_JWKS_URL=context.apple.jwks_url,
               HERALD_APPLE_BASE_URL=context.apple.base, HERALD_LOG_LEVEL="warning")
    with open(os.path.join(folder, "herald.log"), "wb") as log:
        process = subprocess.Popen([context.binary, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            context.wait_healthy(f"http://127.0.0.1:{public}", process, lambda: open(log.name).read(), path="/readyz")
            assert requests.get(f"http://127.0.0.1:{public}/metrics", timeout=5).status_code == 404
            assert requests.get(f"http://127.0.0.1:{admin}/metrics", timeout=5).status_code == 200
            discovery = requests.get(f"http://127.0.0.1:{public}/api/oauth/none/.well-known/openid-configuration", timeout=5)
            assert discovery.status_code == 404, discovery.text
            assert os.stat(os.path.join(folder, "herald.key")).st_mode & 0o777 == 0o600
        finally:
            process.terminate()
            process.wait(timeout=15)


@file_check
def nginx_tls_site_serves_herald(context):
    """nginx -t, then nginx with the site in front of the real binary over TLS. Rewritten for an
    unprivileged run: listen ports, the certificate paths, the upstream port, IPv6 listens dropped."""
    import re
    import subprocess
    import tempfile
    site = open(os.path.join(context.root, "docs/nginx/herald-tls.conf")).read()
    prefix = tempfile.mkdtemp(prefix="nginx-", dir=context.tmp)
    cert, key = os.path.join(prefix, "cert.pem"), os.path.join(prefix, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "1", "-subj", "/CN=id.acme.example", "-addext", "subjectAltName=DNS:id.acme.example",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    http_port, https_port = context.free_port(), context.free_port()
    rewritten = site
    for old, new in [("    listen 80;\n", f"    listen 127.0.0.1:{http_port};\n"),
                     ("    listen 443 ssl http2;\n", f"    listen 127.0.0.1:{https_port} ssl http2;\n"),
                     ("/etc/letsencrypt/live/id.acme.example/fullchain.pem", cert),
                     ("/etc/letsencrypt/live/id.acme.example/privkey.pem", key),
                     ("server 127.0.0.1:8080 ", f"server 127.0.0.1:{context.herald.port} ")]:
        assert old in rewritten, old
        rewritten = rewritten.replace(old, new)
    rewritten = re.sub(r"\n    listen \[::\]:[^\n]*", "", rewritten)
    with open(os.path.join(prefix, "herald.conf"), "w") as f:
        f.write(rewritten)
    with open(os.path.join(prefix, "nginx.conf"), "w") as f:
        f.write(f"""daemon off;
worker_processes 1;
pid nginx.pid;
error_log error.log warn;
lock_file nginx.lock;
events {{ worker_connections 64; }}
http {{
    client_body_temp_path client_body;
    proxy_temp_path proxy;
    fastcgi_temp_path fastcgi;
    uwsgi_temp_path uwsgi;
    scgi_temp_path scgi;
    include herald.conf;
}}
""")
    conf = os.path.join(prefix, "nginx.conf")
    tested = subprocess.run(["nginx", "-t", "-c", conf, "-p", prefix + "/"], capture_output=True, text=True, timeout=30)
    assert tested.returncode == 0, tested.stderr
    nginx = subprocess.Popen(["nginx", "-c", conf, "-p", prefix + "/"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def curl(*arguments):
            return subprocess.run(["curl", "-sS", "--cacert", cert, "--resolve", f"id.acme.example:{https_port}:127.0.0.1",
                                   "--resolve", f"id.acme.example:{http_port}:127.0.0.1", *arguments],
                                  capture_output=True, text=True, timeout=10)
        deadline = __import__("time").monotonic() + 10
        while curl(f"https://id.acme.example:{https_port}/healthz").stdout != '{"status":"ok"}':
            assert __import__("time").monotonic() < deadline, open(os.path.join(prefix, "error.log")).read()
            __import__("time").sleep(0.1)
        head = curl("-D", "-", "-o", "/dev/null", f"https://id.acme.example:{https_port}/api/oauth/acme/jwks.json").stdout
        assert head.startswith("HTTP/2 200") and "strict-transport-security: max-age=63072000" in head.lower(), head
        for hidden in ("/metrics", "/api/admin/realms", "/console/"):
            status = curl("-o", "/dev/null", "-w", "%{http_code}", f"https://id.acme.example:{https_port}{hidden}").stdout
            assert status == "404", (hidden, status)
        moved = curl("-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", f"http://id.acme.example:{http_port}/healthz").stdout
        assert moved == "301 https://id.acme.example/healthz", moved
        nonce, token, _ = context.credential(sub="001234.tls.0001")
        login = curl("-X", "POST", "-H", "Content-Type: application/json", "-d",
                     json.dumps({"identityToken": token, "clientId": "acme-ios", "nonce": nonce}),
                     f"https://id.acme.example:{https_port}/api/oauth/acme/apple/native-login")
        assert json.loads(login.stdout)["message"] == "Login successful", login.stdout
        old_protocol = curl("--tlsv1.1", "--tls-max", "1.1", f"https://id.acme.example:{https_port}/healthz")
        assert old_protocol.returncode != 0, "TLS 1.1 must be refused"
    finally:
        nginx.terminate()
        nginx.wait(timeout=15)


@file_check
def prometheus_rules_name_real_metrics(context):
    import re
    import yaml
    rules = yaml.safe_load(open(os.path.join(context.root, "docs/prometheus/herald-alerts.yml")))
    metrics = context.metrics()
    families = {}  # family -> label names seen
    routes = set()
    for line in metrics.splitlines():
        if line.startswith("# TYPE "):
            families.setdefault(line.split()[2], set())
        elif line and not line.startswith("#"):
            name = re.match(r"[a-z_]+", line).group(0)
            labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', line.split("{", 1)[1].rsplit("}", 1)[0])) if "{" in line else {}
            family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in families else name
            families.setdefault(family, set()).update(labels)
            if "route" in labels:
                routes.add(labels["route"])
    assert [group["name"] for group in rules["groups"]] == ["herald"]
    names = set()
    for rule in rules["groups"][0]["rules"]:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"} and rule["alert"] not in names, rule
        names.add(rule["alert"])
        assert rule["labels"]["severity"] in ("page", "ticket") and rule["annotations"]["summary"], rule
        expr = rule["expr"]
        for opening, closing in ("()", "[]", "{}"):
            assert expr.count(opening) == expr.count(closing), (rule["alert"], opening)
        if "for" in rule:
            assert re.fullmatch(r"\d+[smh]", rule["for"]), rule
        by_labels = set()
        for group_labels in re.findall(r"by \(([^)]*)\)", expr):
            by_labels.update(label.strip() for label in group_labels.split(","))
        for metric, matchers in re.findall(r"(herald_[a-z_]+)(?:\{([^}]*)\})?", expr):
            family = re.sub(r"_bucket$", "", metric)
            assert family in families, f"{rule['alert']}: {metric} is not on /metrics"
            for label, value in re.findall(r'([a-z_]+)\s*(?:=~|!=|=)\s*"([^"]*)"', matchers):
                assert label in families[family] or (label == "le" and metric.endswith("_bucket")), (rule["alert"], label)
                if label == "route":
                    assert value in routes, (rule["alert"], value, sorted(routes))
            assert by_labels <= families[family] | {"instance", "job", "le"}, (rule["alert"], by_labels)
        for label in re.findall(r"\$labels\.([a-z_]+)", json.dumps(rule["annotations"])):
            assert label in by_labels or label == "instance", (rule["alert"], label)


@file_check
def native_only_provider_uses_the_bundle_id(context):
    """apple-setup.md: an app that only signs in natively may use its Bundle ID as `clientId`, with
    `audiences` empty; its login works and its code is exchanged under that Bundle ID."""
    herald = context.herald
    herald.admin("POST", "/api/admin/realms", {"id": "acme-native-only"})
    herald.admin("PUT", "/api/admin/realms/acme-native-only/providers/apple", {
        "clientId": "com.acme.ios", "teamId": "TEAMWEB123", "keyId": "KEYWEB4567", "privateKey": context.apple.p8})
    herald.admin("POST", "/api/admin/realms/acme-native-only/clients",
                 {"clientId": "acme-ios", "name": "Acme for iOS", "firstParty": True})
    before = _apple_calls(context, "token_exchange", "success")
    session = context.native_login(realm="acme-native-only", sub="001234.nativeonly.0001", code=True)
    assert session["message"] == "Login successful", session
    wait_for(lambda: _apple_calls(context, "token_exchange", "success") > before, "the exchange under the Bundle ID")


# Names in the docs are the code's.

# Names of the DELETE /api/auth/{realm}/me contract (issue #37), served from the route's own branch.
CONTRACT_NAMES = {"not_stored", "reauthentication_required", "insufficient_scope", "insufficient_user_authentication",
                  "account_deleted_by_user", "deleted_by_user"}
CONTRACT_EVENTS = {"account.deleted_by_user"}
# Names that are not Herald's: nginx's and PostgreSQL's.
FOREIGN_NAMES = {"max_fails", "pg_dump"}


@file_check
def names_in_the_docs_are_the_codes(context):
    """Every snake_case name in backticks (error codes, reasons, outcomes, labels, log events) occurs
    in Sources/, every `herald_*` metric is on /metrics, and every event type is a SecurityEventType."""
    import glob
    import re
    from docs_test import DOCS
    sources = "".join(open(path, encoding="utf-8").read() for path in glob.glob(os.path.join(context.root, "Sources/**/*.swift"), recursive=True)
                      if not path.endswith(("OpenAPIDocument.swift", "ConsoleFiles.swift")))
    events = set(re.findall(r'case \w+ = "([a-z_]+\.[a-z_.]+)"', open(os.path.join(
        context.root, "Sources/Realms/Events/SecurityEvent.swift")).read()))
    metrics = context.metrics()
    families = {line.split()[2] for line in metrics.splitlines() if line.startswith("# TYPE ")}
    problems = []
    for doc in DOCS:
        text = open(os.path.join(context.root, doc), encoding="utf-8").read()
        for code in re.findall(r"`([^`\n]+)`", text):
            if "/" in code or code.endswith((".py", ".swift", ".md", ".conf", ".yml", ".service", ".env")):
                continue  # a path
            for name in re.findall(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b", code):
                if name.startswith("herald_"):
                    family = re.sub(r"_(bucket|sum|count)$", "", name)
                    if name not in families and family not in families:
                        problems.append(f"{doc}: metric {name} is not on /metrics")
                elif name in CONTRACT_NAMES or name in FOREIGN_NAMES:
                    continue
                elif name.startswith("rejected_") and name[len("rejected_"):] in sources:
                    continue  # herald_apple_notifications_total's outcome rejected_<reason>
                elif name not in sources:
                    problems.append(f"{doc}: {name} does not occur in Sources/")
            for event in re.findall(r"(?<![\w.])((?:login|refresh_token|authorization_code|account|apple)\.[a-z_.]+)\b", code):
                if event not in events | CONTRACT_EVENTS:
                    problems.append(f"{doc}: {event} is not a SecurityEventType")
    assert not problems, "\n".join(problems)


def _partner_access_token(context):
    _, tokens = partner_sign_in_native(context, "001234.partner.0002")
    return {"ACCESS": tokens["access_token"]}


@snippet("partner-delete-needs-scope", setup=_partner_access_token)
def _(result, context):
    answer = body(result)
    if answer.get("status") in (404, 405) and answer.get("code") in ("not_found", "method_not_allowed"):
        raise Skip("DELETE /api/auth/{realm}/me is not served by this build")
    assert (answer["status"], answer["code"], answer["details"]) == (403, "insufficient_scope", {"scope": "account:delete"}), answer


@file_check
def partner_app_deletes_with_the_scope(context):
    """third-party.md: with `account:delete` allowed on the client and asked for at /authorize, a
    partner's token deletes the account at DELETE /me (no Apple code was sent: `not_stored`)."""
    herald = context.herald
    client = herald.admin("GET", "/api/admin/realms/acme/clients/acme-backend")
    probe = requests.delete(herald.base + "/api/auth/acme/me", timeout=10)
    if probe.status_code in (404, 405):
        raise Skip("DELETE /api/auth/{realm}/me is not served by this build")
    herald.admin("PATCH", "/api/admin/realms/acme/clients/acme-backend",
                 {"allowedScopes": client["allowedScopes"] + ["account:delete"]})
    backend = partner_backend(context)
    backend.client.scope = "openid account:delete"
    url, saved = backend.start()
    pending = requests.get(url, headers={"Accept": "application/json"}, allow_redirects=False, timeout=10)
    assert pending.status_code == 200, pending.text
    login = context.native_login(sub="001234.partner.0003", client="acme-backend",
                                 downstream=pending.json()["downstreamState"])
    claims, tokens = backend.finish(login["redirectUri"], saved)
    assert "account:delete" in tokens["scope"].split(), tokens["scope"]
    deleted = requests.delete(herald.base + "/api/auth/acme/me", timeout=10,
                              headers={"Authorization": "Bearer " + tokens["access_token"]})
    assert deleted.status_code == 200 and deleted.json() == {"deleted": True, "appleTokenRevocation": "not_stored"}, deleted.text
