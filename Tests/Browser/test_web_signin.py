"""The Apple web flow in a real browser (headless Chromium driven by Selenium): Herald's
redirect to Apple, the fake Apple's consent page posting form_post back, Herald's result page
— and the cancel path. Herald is the real binary on loopback; Apple is fakeapple_web.py."""
import base64
import json
import os
import urllib.parse

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

import console_driver
import fakeapple_web

REALM = "browser"
SERVICES_ID = "com.example.browser.web"
RETURN_TO = "https://app.example.com/apple-done"


@pytest.fixture(scope="module")
def apple():
    fake = fakeapple_web.FakeAppleWeb()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def herald(apple):
    server = console_driver.Herald(os.environ["HERALD_BIN"], jwks_url=apple.jwks_url,
                                   extra=("--apple-base-url", apple.base))

    def admin(method, path, body):
        response = server.admin(method, path, body)
        assert response.status_code in (200, 201), f"{path}: {response.status_code} {response.text}"

    admin("POST", "/realms", {"id": REALM})
    admin("PUT", f"/realms/{REALM}/providers/apple", {
        "enabled": True, "clientId": SERVICES_ID, "teamId": fakeapple_web.TEAM_ID, "keyId": fakeapple_web.KEY_ID,
        "privateKey": apple.p8, "returnUrls": [f"{server.base}/api/oauth/{REALM}/apple/callback"]})
    admin("POST", f"/realms/{REALM}/clients",
          {"clientId": "web-app", "name": "Web app", "firstParty": True, "redirectUris": [RETURN_TO]})
    yield server.base
    server.stop()


@pytest.fixture(scope="module")
def browser():
    driver = console_driver.chromium()
    yield driver
    driver.quit()


def _result(browser):
    """The JSON the app reads from the result page."""
    element = WebDriverWait(browser, 15).until(
        expected_conditions.presence_of_element_located((By.ID, "herald-login-result")))
    return json.loads(element.get_attribute("textContent"))


def _start(browser, herald):
    query = urllib.parse.urlencode({"clientId": "web-app", "returnTo": RETURN_TO})
    browser.get(f"{herald}/api/oauth/{REALM}/apple/login?{query}")
    WebDriverWait(browser, 15).until(expected_conditions.presence_of_element_located((By.ID, "continue")))


def test_sign_in_in_a_browser(browser, herald, apple):
    _start(browser, herald)
    assert browser.current_url.startswith(apple.base + "/auth/authorize?")
    # The cookie binding the state to this browser (login CSRF) was accepted as sent; read it
    # on Herald's origin, where it lives.
    browser.get(f"{herald}/healthz")
    binding = browser.get_cookie("__Host-herald-apple-web")
    assert binding and binding["secure"] and binding["httpOnly"] and binding["sameSite"] == "None", binding
    browser.back()
    browser.find_element(By.ID, "continue").click()
    result = _result(browser)
    assert result["status"] == "success", result
    assert result["user"]["name"]["givenName"] == "Grace"
    assert result["user"]["email"] == "browser@example.com"
    # Herald's own access token works, and the exchange used a client secret Apple accepted.
    me = requests.get(f"{herald}/api/auth/{REALM}/me", timeout=10,
                      headers={"Authorization": f"Bearer {result['accessToken']}"})
    assert me.status_code == 200
    assert any(path == "/auth/token" and valid and form["client_id"] == SERVICES_ID
               for path, form, valid in apple.calls)
    # The button the app intercepts: returnTo with the same result in the fragment.
    link = browser.find_element(By.ID, "herald-continue").get_attribute("href")
    assert link.startswith(RETURN_TO + "#herald-login-result=")
    fragment = link.split("#herald-login-result=", 1)[1]
    assert json.loads(base64.urlsafe_b64decode(fragment + "=" * (-len(fragment) % 4)))["accessToken"] == \
        result["accessToken"]
    # The human-readable table masks the tokens.
    table = browser.find_element(By.TAG_NAME, "table").text
    assert result["refreshToken"] not in table and result["accessToken"] not in table


def test_cancel_is_a_normal_result(browser, herald):
    _start(browser, herald)
    browser.find_element(By.ID, "cancel").click()
    result = _result(browser)
    assert result == {"status": "cancelled", "error": "user_cancelled_authorize"}
    assert browser.find_element(By.ID, "herald-continue").get_attribute("href") == RETURN_TO
