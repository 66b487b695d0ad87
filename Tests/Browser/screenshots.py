"""Takes the console screenshots in docs/console/ (run by hand after a visible change; not
part of make test):

    HERALD_BIN=.build/debug/herald python Tests/Browser/screenshots.py

Needs the browser stage's packages (Tests/Browser/requirements.txt, chromium, chromedriver).
Seeds a realm `acme` as an operator would, through the admin API with change reasons, plus
one native login so the account pages have something to show."""
import os
import secrets
import sys

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

import console_driver

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "console")


def seed(herald):
    def admin(method, path, body=None, reason="initial setup"):
        response = requests.request(method, herald.base + "/api/admin" + path, json=body, timeout=10, headers={
            "Authorization": f"Bearer {herald.token}", "X-Change-Reason": reason})
        assert response.status_code < 300, f"{path}: {response.status_code} {response.text}"
        return response.json() if response.text else None

    admin("POST", "/realms", {"id": "acme", "displayName": "Acme", "loginUrl": "https://login.acme.example/apple"})
    admin("PATCH", "/realms/acme", {"accessTokenTTL": 600}, reason="shorter access tokens (SEC-12)")
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    admin("PUT", "/realms/acme/providers/apple", {
        "clientId": "com.acme.web", "audiences": ["com.acme.ios"], "teamId": "ABCDE12345", "keyId": "KEY1234567",
        "privateKey": key, "returnUrls": [f"{herald.base}/api/oauth/acme/apple/callback"]}, reason="Sign in with Apple")
    admin("POST", "/realms/acme/clients", {"clientId": "ios-app", "name": "Acme for iOS", "firstParty": True})
    admin("POST", "/realms/acme/clients", {"clientId": "partner", "name": "Partner portal", "confidential": True,
                                           "redirectUris": ["https://partner.example.com/oauth/callback"]})
    for name, email in [("000101.ada", "ada@example.com"), ("000102.grace", "grace@example.com")]:
        nonce = secrets.token_urlsafe(16)
        token = herald.apple.identity_token("com.acme.ios", name, nonce, email=email)
        login = requests.post(f"{herald.base}/api/oauth/acme/apple/native-login", timeout=10,
                              json={"identityToken": token, "clientId": "ios-app", "nonce": nonce})
        assert login.status_code == 200, login.text
    return login.json()["userId"]


def main():
    os.makedirs(OUT, exist_ok=True)
    herald = console_driver.Herald(os.environ["HERALD_BIN"])
    driver = console_driver.chromium(1280, 860)
    try:
        account = seed(herald)
        console = console_driver.Console(driver, herald)

        def shot(name, css):
            console.find(css)
            path = os.path.join(OUT, f"{name}.png")
            driver.get_screenshot_as_file(path)
            print(f"{path}: {os.path.getsize(path) // 1024} KiB")

        console.open("/realms")
        shot("sign-in", "#sign-in")
        console.sign_in()
        console.wait(lambda _: "acme" in console.text("#realm-table"))
        shot("realms", "#realm-table")
        console.go("/realms/acme")
        shot("realm-settings", "#realm-settings")
        console.go("/realms/acme/apple")
        shot("apple-provider", "#audience-list")
        console.go("/realms/acme/clients")
        console.type("#create-client [name=clientId]", "backend")
        console.type("#create-client [name=name]", "Acme backend")
        console.find("#create-client [name=confidential]").click()
        console.submit("#create-client", "the backend's client")
        shot("client-secret-once", "#client-secret")
        console.go("/realms/acme/clients")
        shot("clients", "#client-table")
        console.go(f"/realms/acme/accounts/{account}")
        shot("account", "#session-table")
        console.go("/realms/acme/keys")
        shot("keys", "#key-table")
        console.go("/audit?realm=acme")
        shot("audit", "#audit-table")
        console.go("/realms/acme")
        console.type("#realm-settings [name=accessTokenTTL]", "5")
        console.submit("#realm-settings", "too short on purpose")
        console.field_error("#realm-settings", "accessTokenTTL")
        driver.execute_script("document.querySelector('[data-field=accessTokenTTL]').scrollIntoView({block: 'center'})")
        shot("field-error", "#realm-settings .field.invalid")
        console.go("/realms/acme/keys")
        console.find("#rotate-key-button").click()
        console.type("#change-reason", "quarterly rotation")
        shot("typed-confirmation", "#change-confirm")
    finally:
        driver.quit()
        herald.stop()


if __name__ == "__main__":
    sys.exit(main())
