"""The admin console (/console/) in a real browser against the real binary: sign in, create
a realm, configure Apple (a Bundle ID and a .p8 upload) and Google (client ids, a hosted
domain), add a confidential client and read its secret exactly once, an account created by a
native login and then disabled, each change in the audit page with its reason, errors on
their fields, and sign-out."""
import os
import secrets

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from selenium.webdriver.common.by import By

import console_driver

REALM = "console-test"
BUNDLE_ID = "com.example.console.ios"
GOOGLE_WEB = "123456789012-consoleweb.apps.googleusercontent.com"
GOOGLE_IOS = "123456789012-consoleios.apps.googleusercontent.com"


@pytest.fixture(scope="module")
def herald():
    server = console_driver.Herald(os.environ["HERALD_BIN"])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def console(herald):
    driver = console_driver.chromium()
    yield console_driver.Console(driver, herald)
    driver.quit()


def csp_violations(driver):
    return [entry["message"] for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]]


def test_a_wrong_token_is_refused_and_nothing_is_kept(console):
    console.sign_in("not-the-admin-token-" + secrets.token_hex(8))
    assert "401" in console.text("#sign-in .form-error")
    assert console.driver.execute_script("return sessionStorage.length") == 0
    assert console.driver.get_cookies() == []


def test_console_manages_a_realm_end_to_end(console, herald, tmp_path):
    driver = console.driver
    # /console redirects to /console/; the token goes to sessionStorage, never to a cookie.
    driver.get(herald.base + "/console")
    assert driver.current_url.startswith(herald.base + "/console/")
    console.sign_in()
    console.find("#create-realm")
    assert driver.execute_script("return sessionStorage.getItem('herald.adminToken')") == herald.token
    assert driver.get_cookies() == []

    # Create a realm.
    console.type("#new-realm-id", REALM)
    console.type("#new-realm-name", "Console test")
    console.submit("#create-realm", "set up the console test realm")
    console.find("#realm-settings")
    assert herald.admin("GET", f"/realms/{REALM}").json()["displayName"] == "Console test"

    # A bad value is shown on its own field, and nothing changes.
    console.type("#realm-settings [name=accessTokenTTL]", "5")
    console.submit("#realm-settings", "too short on purpose")
    assert "accessTokenTTL" in console.field_error("#realm-settings", "accessTokenTTL")
    assert "invalid" in console.find('#realm-settings .field[data-field="accessTokenTTL"]').get_attribute("class")
    assert herald.admin("GET", f"/realms/{REALM}").json()["accessTokenTTL"] == 900
    # A good one is saved.
    console.type("#realm-settings [name=accessTokenTTL]", "600")
    console.submit("#realm-settings", "shorter access tokens")
    console.wait(lambda _: herald.admin("GET", f"/realms/{REALM}").json()["accessTokenTTL"] == 600)

    # Apple: Services ID, a Bundle ID (typed confirmation), Team and Key ID, the .p8 upload.
    key = ec.generate_private_key(ec.SECP256R1())
    p8 = tmp_path / "AuthKey_CONSOLE123.p8"
    p8.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    console.go(f"/realms/{REALM}/apple")
    console.type("#apple-provider [name=clientId]", "com.example.console.web")
    console.type("#new-audience", BUNDLE_ID)
    console.find("#add-audience").click()
    console.type("#apple-provider [name=teamId]", "TEAMCON123")
    console.type("#apple-provider [name=keyId]", "KEYCON4567")
    console.find("#apple-provider [name=privateKey]").send_keys(str(p8))
    console.type("#apple-provider [name=returnUrls]", f"{herald.base}/api/oauth/{REALM}/apple/callback")
    console.find("#save-apple").click()
    assert not console.find("#change-confirm").get_attribute("hidden")  # audiences changed: confirmation asked
    console.answer("configure Sign in with Apple", confirm=REALM)
    console.wait(lambda _: "is stored" in console.text("#private-key-state"))
    provider = herald.admin("GET", f"/realms/{REALM}/providers/apple").json()
    assert provider["audiences"] == [BUNDLE_ID] and provider["privateKeyConfigured"] and provider["teamId"] == "TEAMCON123"
    assert "privateKey" not in provider
    assert console.find("#apple-provider [name=privateKey]").get_attribute("value") == ""

    # Google: client ids (typed confirmation); a bad hosted domain is shown on its field and
    # changes nothing; then a good one is saved.
    console.go(f"/realms/{REALM}/google")
    console.type("#google-provider [name=clientIds]", f"{GOOGLE_WEB}\n{GOOGLE_IOS}")
    console.type("#google-provider [name=hostedDomain]", "Example.COM")
    console.find("#save-google").click()
    console.answer("a wrong hosted domain on purpose", confirm=REALM)
    assert "hostedDomain" in console.field_error("#google-provider", "hostedDomain")
    assert herald.admin("GET", f"/realms/{REALM}/providers/google").status_code == 404
    console.type("#google-provider [name=hostedDomain]", "example.com")
    console.find("#save-google").click()
    console.answer("configure Sign in with Google", confirm=REALM)
    console.wait(lambda _: herald.admin("GET", f"/realms/{REALM}/providers/google").status_code == 200)
    google = herald.admin("GET", f"/realms/{REALM}/providers/google").json()
    assert google["clientIds"] == [GOOGLE_WEB, GOOGLE_IOS] and google["hostedDomain"] == "example.com"
    assert google["enabled"] is True

    # A confidential client: its secret is shown once and works.
    console.go(f"/realms/{REALM}/clients")
    console.type("#create-client [name=clientId]", "backend")
    console.type("#create-client [name=name]", "Backend")
    console.find("#create-client [name=confidential]").click()
    console.type("#create-client [name=redirectUris]", "https://app.example.com/callback")
    console.submit("#create-client", "the backend's client")
    secret = console.text("#client-secret")
    assert len(secret) >= 32
    introspect = f"{herald.base}/api/oauth/{REALM}/introspect"
    assert requests.post(introspect, data={"token": "x"}, auth=("backend", secret), timeout=10).status_code == 200
    assert requests.post(introspect, data={"token": "x"}, auth=("backend", secret + "x"), timeout=10).status_code == 401
    console.find("#secret-stored").click()
    assert not driver.find_elements(By.ID, "client-secret")
    driver.refresh()
    console.find("#client-settings")
    assert not driver.find_elements(By.ID, "client-secret")
    assert secret not in driver.page_source
    assert secret not in driver.execute_script("return JSON.stringify(sessionStorage)")

    # A first-party client for the iOS app, then an account created by its native login.
    console.go(f"/realms/{REALM}/clients")
    console.type("#create-client [name=clientId]", "ios-app")
    console.type("#create-client [name=name]", "iOS app")
    console.find("#create-client [name=firstParty]").click()
    console.submit("#create-client", "the iOS app")
    console.find("#client-settings")
    assert not driver.find_elements(By.ID, "client-secret")  # a public client has no secret
    nonce = secrets.token_urlsafe(16)
    token = herald.apple.identity_token(BUNDLE_ID, "000111.console.user", nonce, email="grace@example.com")
    login = requests.post(f"{herald.base}/api/oauth/{REALM}/apple/native-login", timeout=10,
                          json={"identityToken": token, "clientId": "ios-app", "nonce": nonce})
    assert login.status_code == 200, login.text
    account_id = login.json()["userId"]

    # Find it by email, see its identity and session, disable it.
    console.go(f"/realms/{REALM}/accounts")
    console.type("#account-email", "grace@example.com")
    console.find("#account-search button[type=submit]").click()
    console.wait(lambda _: "grace@example.com" in console.text("#account-table"))
    console.find("#account-table a").click()
    assert "000111.console.user" in console.text("#identity-table")
    assert "ios-app" in console.text("#session-table")
    console.submit("#toggle-account", "disable for the console test")
    console.wait(lambda _: console.text("#account-status-value") == "disabled")
    assert herald.admin("GET", f"/realms/{REALM}/accounts/{account_id}").json()["status"] == "disabled"
    me = requests.get(f"{herald.base}/api/auth/{REALM}/me", timeout=10,
                      headers={"Authorization": f"Bearer {login.json()['accessToken']}"})
    assert me.status_code == 403

    # Every change is in the audit page with its reason, the realm update as a before/after diff.
    console.go(f"/audit?realm={REALM}")
    console.wait(lambda _: "disable for the console test" in console.text("#audit-table"))
    audit = console.text("#audit-table")
    for reason in ["set up the console test realm", "shorter access tokens", "configure Sign in with Apple",
                   "configure Sign in with Google", "the backend's client", "the iOS app", "disable for the console test"]:
        assert reason in audit, reason
    assert "too short on purpose" not in audit  # refused, so not a change
    assert "a wrong hosted domain on purpose" not in audit
    updates = [row for row in driver.find_elements(By.CSS_SELECTOR, "#audit-table > tbody > tr")
               if row.find_elements(By.TAG_NAME, "td")[2].text == "realm.update"]
    assert len(updates) == 1
    diff = [row for row in updates[0].find_elements(By.CSS_SELECTOR, "table.diff tr")
            if row.find_element(By.TAG_NAME, "th").text == "accessTokenTTL"]
    assert diff and diff[0].find_element(By.CSS_SELECTOR, ".before").text == "900"
    assert diff[0].find_element(By.CSS_SELECTOR, ".after").text == "600"
    assert p8.read_text().splitlines()[1] not in audit  # the .p8 is never shown back
    assert secret not in audit and secret not in herald.log_text()

    assert csp_violations(driver) == []


def test_high_risk_changes_need_the_typed_id(console, herald):
    console.go(f"/realms/{REALM}/keys")
    before = herald.admin("GET", f"/realms/{REALM}/keys").json()["items"]
    console.find("#rotate-key-button").click()
    console.type("#change-reason", "rotate for the test")
    console.type("#change-confirm", "not-the-realm")
    console.find("#change-apply").click()
    assert "Type" in console.text("#change-confirm-field .field-error")
    assert herald.admin("GET", f"/realms/{REALM}/keys").json()["items"] == before
    console.type("#change-confirm", REALM)
    console.find("#change-apply").click()
    console.wait(lambda _: len(herald.admin("GET", f"/realms/{REALM}/keys").json()["items"]) == len(before) + 1)


def test_sign_out_forgets_the_token(console):
    console.find("#sign-out").click()
    console.find("#sign-in")
    assert console.driver.execute_script("return sessionStorage.length") == 0
    console.open(f"/realms/{REALM}")
    console.find("#sign-in")
    assert csp_violations(console.driver) == []


def _signed_in_with(console, herald, name, body):
    """A fresh admin token made through the API (the console has no token page), signed in."""
    created = herald.admin("POST", "/tokens", {"name": name, **body})
    assert created.status_code == 201, created.text
    console.driver.execute_script("sessionStorage.clear()")
    console.sign_in(created.json()["token"])


def test_a_viewer_token_sees_but_cannot_change(console, herald):
    before = herald.admin("GET", f"/realms/{REALM}").json()
    _signed_in_with(console, herald, "console-viewer", {"role": "viewer"})
    console.open(f"/realms/{REALM}")
    console.type('#realm-settings .field[data-field="displayName"] input', "changed by a viewer")
    console.submit("#realm-settings", "a viewer tries to change the realm")
    console.wait(lambda driver: "403" in driver.find_element(By.CSS_SELECTOR, "#realm-settings .form-error").text)
    assert herald.admin("GET", f"/realms/{REALM}").json() == before
    denied = herald.admin("GET", f"/audit?action=admin.denied&realm={REALM}").json()["items"]
    assert any(entry["actor"] == "console-viewer" for entry in denied)


def test_a_token_of_one_realm_cannot_see_another(console, herald):
    other = "console-other"
    assert herald.admin("POST", "/realms", {"id": other}).status_code == 201
    _signed_in_with(console, herald, "console-one-realm", {"realms": [REALM]})
    table = console.text("#realm-table")
    assert REALM in table and other not in table
    console.open(f"/realms/{other}")
    console.wait(lambda driver: "404" in driver.find_element(By.TAG_NAME, "main").text)
    assert csp_violations(console.driver) == []
