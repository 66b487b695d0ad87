"""Sign in with Google on the web in a real browser (headless Chromium driven by Selenium):
Herald's login page loads Google Identity Services, whose button POSTs the ID token to Herald's
login_uri in redirect mode, and Herald answers with the same result page as the Apple web flow
— for the realm's own app (branch A) and for a partner's pending authorization (branch B) —
while the page's CSP refuses nothing GIS needs. The double-submit check is driven from outside
the browser. Herald is the real binary on loopback; Google is fakegoogle_web.py."""
import base64
import hashlib
import json
import os
import re
import secrets
import urllib.parse

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

import console_driver
import fakegoogle_web

REALM = "google-browser"
GOOGLE_WEB = "123456789012-browserweb.apps.googleusercontent.com"
GOOGLE_ANDROID = "123456789012-browserandroid.apps.googleusercontent.com"
RETURN_TO = "https://app.example.com/google-done"
LOGIN_URL = "https://app.example.com/login"
PARTNER_REDIRECT = "https://partner.example/callback"
BINDING_COOKIE = "__Host-herald-google-web"


class Server:
    def __init__(self, herald):
        self.herald = herald
        self.base = herald.base
        self.issuer = f"{herald.base}/api/oauth/{REALM}"

    def admin(self, method, path, body=None):
        response = self.herald.admin(method, path, body)
        assert response.status_code in (200, 201), f"{path}: {response.status_code} {response.text}"
        return response.json()

    def accounts(self):
        return self.admin("GET", f"/realms/{REALM}/accounts")["items"]

    def login_url(self, **query):
        return f"{self.issuer}/google/login?{urllib.parse.urlencode(query)}"


@pytest.fixture(scope="module")
def google():
    fake = fakegoogle_web.FakeGoogleWeb()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def herald(google):
    process = console_driver.Herald(os.environ["HERALD_BIN"], extra=(
        "--google-jwks-url", google.jwks_url, "--google-gsi-script-url", google.script_url))
    server = Server(process)
    server.admin("POST", "/realms", {"id": REALM, "loginUrl": LOGIN_URL})
    server.admin("PUT", f"/realms/{REALM}/providers/google",
                 {"enabled": True, "clientIds": [GOOGLE_WEB, GOOGLE_ANDROID], "hostedDomain": None})
    server.admin("POST", f"/realms/{REALM}/clients",
                 {"clientId": "web-app", "name": "Web app", "firstParty": True, "redirectUris": [RETURN_TO]})
    server.admin("POST", f"/realms/{REALM}/clients",
                 {"clientId": "partner", "name": "Partner", "redirectUris": [PARTNER_REDIRECT],
                  "allowedScopes": ["openid", "profile", "email"]})
    yield server
    process.stop()


@pytest.fixture(scope="module")
def browser():
    driver = console_driver.chromium()
    yield driver
    driver.quit()


def csp_violations(driver):
    """The browser console's CSP reports since the last call (reading the log drains it)."""
    return [entry["message"] for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]]


def csp_directives(header):
    directives = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0]] = words[1:]
    return directives


def _result(browser):
    """The JSON the app reads from the result page."""
    element = WebDriverWait(browser, 15).until(
        expected_conditions.presence_of_element_located((By.ID, "herald-login-result")))
    return json.loads(element.get_attribute("textContent"))


def _sign_in(browser, url):
    """Opens Herald's Google login page and clicks the button GIS rendered; the page's GIS config."""
    browser.get(url)
    button = WebDriverWait(browser, 15).until(
        expected_conditions.element_to_be_clickable((By.ID, "google-signin-button")))
    onload = browser.find_element(By.ID, "g_id_onload")
    config = {name: onload.get_attribute(f"data-{name}") for name in ("client_id", "login_uri", "nonce", "ux_mode")}
    binding = browser.get_cookie(BINDING_COOKIE)
    button.click()
    return config, binding


def test_login_page_loads_gis_under_its_csp(herald, google):
    page = requests.get(herald.login_url(clientId="web-app", returnTo=RETURN_TO), timeout=10)
    assert page.status_code == 200, page.text
    assert page.headers["Content-Type"].startswith("text/html")
    assert BINDING_COOKIE + "=" in page.headers.get("Set-Cookie", "")
    assert f'<script src="{google.script_url}" async></script>' in page.text
    assert 'class="g_id_signin"' in page.text
    csp = csp_directives(page.headers["Content-Security-Policy"])
    gsi = google.base + "/gsi/"
    assert google.script_url in csp["script-src"], csp
    for directive in ("connect-src", "frame-src"):
        assert gsi in csp[directive], (directive, csp)
    # GIS's stylesheet (Herald allows just that file under /gsi/, beside its own style's hash).
    assert gsi in csp["style-src"] or gsi + "style" in csp["style-src"], csp
    assert csp["form-action"] == ["'self'"], csp
    # Nothing else may run: no inline script, no other origin.
    assert "'unsafe-inline'" not in csp["script-src"] and "*" not in csp["script-src"], csp


def test_sign_in_with_google_in_a_browser(browser, herald, google):
    csp_violations(browser)
    config, binding = _sign_in(browser, herald.login_url(clientId="web-app", returnTo=RETURN_TO))
    # GIS was configured with the realm's first Google client id, redirect mode, Herald's
    # login_uri and a nonce; the binding cookie was accepted as sent.
    assert config["client_id"] == GOOGLE_WEB
    assert config["login_uri"] == f"{herald.issuer}/google/callback"
    assert config["ux_mode"] == "redirect" and config["nonce"]
    assert binding and binding["secure"] and binding["httpOnly"], binding

    result = _result(browser)
    assert result["status"] == "success", result
    assert result["user"]["email"] == google.email and result["user"]["emailVerified"] is True
    assert result["user"]["name"]["givenName"] == "Grace"
    assert result["isNewUser"] is True
    # The token GIS minted was for that client id and carried the page's nonce verbatim.
    assert google.mints[-1] == {"client_id": GOOGLE_WEB, "nonce": config["nonce"]}
    me = requests.get(f"{herald.base}/api/auth/{REALM}/me", timeout=10,
                      headers={"Authorization": f"Bearer {result['accessToken']}"})
    assert me.status_code == 200, me.text
    link = browser.find_element(By.ID, "herald-continue").get_attribute("href")
    assert link.startswith(RETURN_TO + "#herald-login-result=")
    fragment = link.split("#herald-login-result=", 1)[1]
    assert json.loads(base64.urlsafe_b64decode(fragment + "=" * (-len(fragment) % 4)))["accessToken"] == \
        result["accessToken"]
    table = browser.find_element(By.TAG_NAME, "table").text
    assert result["refreshToken"] not in table and result["accessToken"] not in table
    assert csp_violations(browser) == []


def page_result(response):
    """The result JSON of a result page fetched outside the browser."""
    match = re.search(r'<script type="application/json" id="herald-login-result">(.*?)</script>', response.text, re.S)
    assert match, response.text[:300]
    return json.loads(match.group(1))


def _set_cookie_value(response, name):
    match = re.search(re.escape(name) + r"=([^;,\s]+)", response.headers.get("Set-Cookie", ""))
    assert match, response.headers
    return match.group(1)


def test_callback_without_the_matching_csrf_cookie_is_refused_and_changes_nothing(herald, google):
    """What a cross-site form post of a stolen or replayed credential looks like: the
    g_csrf_token field without the same value in a cookie (invalid_csrf_token), or a matching
    pair from a browser that did not begin the sign-in (invalid_state). Driven with requests,
    because a browser cannot be made to send such a post through GIS. None of them creates an
    account or consumes the sign-in or the credential."""
    page = requests.get(herald.login_url(clientId="web-app", returnTo=RETURN_TO), timeout=10)
    assert page.status_code == 200, page.text
    binding = _set_cookie_value(page, BINDING_COOKIE)
    nonce = re.search(r'data-nonce="([^"]+)"', page.text).group(1)
    credential = google.credential(GOOGLE_WEB, nonce, sub="108642097531246899999",
                                   email="csrf-victim@gmail.example")
    callback = f"{herald.issuer}/google/callback"
    before = herald.accounts()

    def post(cookies, fields):
        header = "; ".join(f"{name}={value}" for name, value in cookies.items())
        return requests.post(callback, data={"credential": credential, "select_by": "btn", **fields}, timeout=10,
                             headers={"Cookie": header} if header else {}, allow_redirects=False)

    csrf = secrets.token_hex(16)
    refusals = {
        "no g_csrf_token cookie": post({BINDING_COOKIE: binding}, {"g_csrf_token": csrf}),
        "a different cookie": post({BINDING_COOKIE: binding, "g_csrf_token": secrets.token_hex(16)},
                                   {"g_csrf_token": csrf}),
        "no g_csrf_token field": post({BINDING_COOKIE: binding, "g_csrf_token": csrf}, {}),
        "an empty pair": post({BINDING_COOKIE: binding, "g_csrf_token": ""}, {"g_csrf_token": ""}),
    }
    for case, response in refusals.items():
        assert response.status_code == 400, f"{case}: {response.status_code} {response.text[:300]}"
        assert "Location" not in response.headers, case
        result = page_result(response)
        assert (result["status"], result["code"]) == ("error", "invalid_csrf_token"), (case, result)
    # A matching pair without the browser binding the login page set, or with another
    # browser's, is login CSRF: refused, and the sign-in stays for the browser that began it.
    another_browser = _set_cookie_value(
        requests.get(herald.login_url(clientId="web-app", returnTo=RETURN_TO), timeout=10), BINDING_COOKIE)
    assert another_browser != binding
    for case, cookies in {"no binding": {}, "another browser's binding": {BINDING_COOKIE: another_browser}}.items():
        response = post({**cookies, "g_csrf_token": csrf}, {"g_csrf_token": csrf})
        assert response.status_code == 400, f"{case}: {response.status_code} {response.text[:300]}"
        assert page_result(response)["code"] == "invalid_state", case
    assert herald.accounts() == before

    # Nothing was consumed: the same credential, posted as GIS posts it, still signs in.
    accepted = post({BINDING_COOKIE: binding, "g_csrf_token": csrf}, {"g_csrf_token": csrf})
    assert accepted.status_code == 200, accepted.text[:300]
    result = page_result(accepted)
    assert result["status"] == "success" and result["user"]["email"] == "csrf-victim@gmail.example", result


def test_branch_b_ends_on_the_partner_redirect_with_a_code(browser, herald, google):
    csp_violations(browser)
    metadata = requests.get(f"{herald.issuer}/.well-known/openid-configuration", timeout=10).json()
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    authorize = requests.get(metadata["authorization_endpoint"], allow_redirects=False, timeout=10, params={
        "response_type": "code", "client_id": "partner", "redirect_uri": PARTNER_REDIRECT,
        "scope": "openid email profile", "state": state, "nonce": nonce,
        "code_challenge": challenge, "code_challenge_method": "S256"})
    assert authorize.status_code == 302, authorize.text
    location = authorize.headers["Location"]
    assert location.startswith(LOGIN_URL + "?")
    downstream = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)["downstreamState"][0]

    _sign_in(browser, herald.login_url(clientId="partner", downstreamState=downstream))
    result = _result(browser)
    assert result["status"] == "success" and "accessToken" not in result, result
    redirect = result["redirectUri"]
    assert redirect.startswith(PARTNER_REDIRECT + "?")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(redirect).query)
    assert query["state"] == [state] and query["iss"] == [metadata["issuer"]]
    assert browser.find_element(By.ID, "herald-continue").get_attribute("href") == redirect
    assert csp_violations(browser) == []

    # The partner's backend exchanges the code with its PKCE verifier.
    token = requests.post(metadata["token_endpoint"], timeout=10, data={
        "grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": PARTNER_REDIRECT,
        "client_id": "partner", "code_verifier": verifier})
    assert token.status_code == 200, token.text
    userinfo = requests.get(metadata["userinfo_endpoint"], timeout=10,
                            headers={"Authorization": "Bearer " + token.json()["access_token"]})
    assert userinfo.status_code == 200 and userinfo.json()["email"] == google.email, userinfo.text
