"""The Apple web flow in a real browser (headless Chromium driven by Selenium): Herald's
redirect to Apple, the fake Apple's consent page posting form_post back, Herald's result page
— and the cancel path. Herald is the real binary on loopback; Apple is fakeapple_web.py."""
import base64
import json
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse

import pytest
import requests
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

import fakeapple_web

REALM = "browser"
SERVICES_ID = "com.example.browser.web"
RETURN_TO = "https://app.example.com/apple-done"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def apple():
    fake = fakeapple_web.FakeAppleWeb()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def herald(apple):
    folder = tempfile.mkdtemp(prefix="herald-browser-")
    token = secrets.token_urlsafe(32)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(os.path.join(folder, "herald.log"), "wb")
    process = subprocess.Popen(
        [os.environ["HERALD_BIN"], "serve", "--host", "127.0.0.1", "--port", str(port), "--public-url", base,
         "--database", f"sqlite:{folder}/herald.db", "--apple-jwks-url", apple.jwks_url,
         "--apple-base-url", apple.base],
        env=dict(os.environ, HERALD_ADMIN_TOKEN=token, HERALD_LOG_LEVEL="warning"), stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        try:
            if requests.get(base + "/healthz", timeout=1).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, "herald did not start"
        time.sleep(0.1)  # polling for start-up

    def admin(method, path, body):
        response = requests.request(method, base + path, json=body, timeout=10,
                                    headers={"Authorization": f"Bearer {token}"})
        assert response.status_code in (200, 201), f"{path}: {response.status_code} {response.text}"

    admin("POST", "/api/admin/realms", {"id": REALM})
    admin("PUT", f"/api/admin/realms/{REALM}/providers/apple", {
        "enabled": True, "clientId": SERVICES_ID, "teamId": fakeapple_web.TEAM_ID, "keyId": fakeapple_web.KEY_ID,
        "privateKey": apple.p8, "returnUrls": [f"{base}/api/oauth/{REALM}/apple/callback"]})
    admin("POST", f"/api/admin/realms/{REALM}/clients",
          {"clientId": "web-app", "name": "Web app", "firstParty": True, "redirectUris": [RETURN_TO]})
    yield base
    process.terminate()
    process.wait(timeout=15)
    log.close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]:
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
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
