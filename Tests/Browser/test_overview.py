"""The realm overview in a real browser against the real binary: sign-ins made here (two web
sign-ins through the fake Apple, one native login refused for its audience) drawn as the SVG
chart, a bar's numbers on focus and hover, the same numbers as a table; then Apple refusing the
client secret (the fake Apple answers invalid_client to a wrong Key ID) shown as a warning in
words and on the gauge; no CSP violation. With HERALD_SCREENSHOTS=1 it also refreshes
docs/console/overview.png and overview-warning.png."""
import json
import os
import secrets
import time
import urllib.parse

import pytest
import requests
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

import console_driver
import fakeapple_web

REALM = "overview"
SERVICES_ID = "com.example.overview.web"
RETURN_TO = "https://app.example.com/apple-done"
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "console")


@pytest.fixture(scope="module")
def apple():
    fake = fakeapple_web.FakeAppleWeb(subject="000777.overview.user", email="overview@example.com")
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def herald(apple):
    server = console_driver.Herald(os.environ["HERALD_BIN"], jwks_url=apple.jwks_url,
                                   extra=("--apple-base-url", apple.base))
    for method, path, body in [
        ("POST", "/realms", {"id": REALM}),
        ("PUT", f"/realms/{REALM}/providers/apple", provider(server, fakeapple_web.KEY_ID, apple.p8)),
        ("POST", f"/realms/{REALM}/clients",
         {"clientId": "web-app", "name": "Web app", "firstParty": True, "redirectUris": [RETURN_TO]}),
    ]:
        response = server.admin(method, path, body)
        assert response.status_code in (200, 201), f"{path}: {response.status_code} {response.text}"
    yield server
    server.stop()


def provider(server, key_id, p8=None):
    body = {"enabled": True, "clientId": SERVICES_ID, "teamId": fakeapple_web.TEAM_ID, "keyId": key_id,
            "returnUrls": [f"{server.base}/api/oauth/{REALM}/apple/callback"]}
    if p8:
        body["privateKey"] = p8
    return body


@pytest.fixture(scope="module")
def console(herald):
    driver = console_driver.chromium(1280, 1000)
    yield console_driver.Console(driver, herald)
    driver.quit()


def csp_violations(driver):
    return [entry["message"] for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]]


def web_sign_in(driver, herald):
    """One pass through Apple's web flow; answers the result page's JSON status."""
    query = urllib.parse.urlencode({"clientId": "web-app", "returnTo": RETURN_TO})
    driver.get(f"{herald.base}/api/oauth/{REALM}/apple/login?{query}")
    WebDriverWait(driver, 15).until(expected_conditions.element_to_be_clickable((By.ID, "continue"))).click()
    element = WebDriverWait(driver, 15).until(
        expected_conditions.presence_of_element_located((By.ID, "herald-login-result")))
    return json.loads(element.get_attribute("textContent"))


def overview(herald):
    response = herald.admin("GET", f"/realms/{REALM}/overview")
    assert response.status_code == 200, response.text
    return response.json()


def wait_for(condition, timeout=15):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)  # the counts reach the database every 2 s


def shot(console, name, css):
    if os.environ.get("HERALD_SCREENSHOTS") != "1":
        return
    console.find(css)
    console.driver.get_screenshot_as_file(os.path.join(DOCS, f"{name}.png"))


def test_charts_draw_real_sign_ins_and_a_refused_secret_warns(console, herald, apple):
    driver = console.driver
    # Real sign-ins: a new account, the same account again, and a native login refused for its audience.
    assert web_sign_in(driver, herald)["status"] == "success"
    assert web_sign_in(driver, herald)["status"] == "success"
    nonce = secrets.token_urlsafe(16)
    token = apple.keys.identity_token("com.other.app", "000777.overview.user", nonce)
    refused = requests.post(f"{herald.base}/api/oauth/{REALM}/apple/native-login", timeout=10,
                            json={"identityToken": token, "clientId": "web-app", "nonce": nonce})
    assert refused.status_code == 401, refused.text
    wait_for(lambda: overview(herald)["totals"]["attempts"] == 3)

    console.sign_in()
    console.find("#realm-table")
    # The realm list opens a realm on its overview.
    console.find(f'#realm-table a[href="#/realms/{REALM}/overview"]').click()
    console.find("#overview-chart")
    assert "No warnings." in console.text("#overview-warnings")
    bars = driver.find_elements(By.CSS_SELECTOR, "#overview-chart g.bar")
    assert len(bars) == 24
    last = bars[-1]
    assert (last.get_attribute("data-success"), last.get_attribute("data-rejected")) == ("2", "1")
    # Drawn bars: two outcomes in the last hour, each a rect with a height.
    assert len(last.find_elements(By.CSS_SELECTOR, "rect.bar-success")) == 1
    assert len(last.find_elements(By.CSS_SELECTOR, "rect.bar-rejected")) == 1
    # Focus shows the bar's numbers in words; so does the pointer.
    driver.execute_script("arguments[0].focus()", last)
    console.wait(lambda _: "2 succeeded" in console.text("#chart-readout"))
    readout = console.text("#chart-readout")
    assert "1 refused" in readout and "rejected: audience 1" in readout and "success: existing 1" in readout
    ActionChains(driver).move_to_element(bars[0]).perform()
    console.wait(lambda _: "0 succeeded" in console.text("#chart-readout"))
    ActionChains(driver).move_to_element(last).perform()
    console.wait(lambda _: "2 succeeded" in console.text("#chart-readout"))
    # The same numbers as a table.
    console.find("#overview-numbers summary").click()
    rows = driver.find_elements(By.CSS_SELECTOR, "#overview-table tbody tr")
    assert len(rows) == 24
    cells = [cell.text for cell in rows[-1].find_elements(By.TAG_NAME, "td")]
    assert cells[1:4] == ["2", "1", "0"] and "rejected: audience 1" in cells[4]
    assert "audience" in console.text("#overview-reasons")
    assert "web" in console.text("#overview-doors") and "native" in console.text("#overview-doors")
    health = console.text("#apple-facts")
    assert "browser-rsa-1" in health and "ok at" in health and "Team ID set, Key ID set, private key stored" in health
    shot(console, "overview", "#overview-chart")

    # The operator types a wrong Key ID: Apple refuses the next client secret.
    response = herald.admin("PUT", f"/realms/{REALM}/providers/apple", provider(herald, "WRONGKEY01"))
    assert response.status_code == 200, response.text
    result = web_sign_in(driver, herald)
    assert result["status"] == "error" and result["code"] == "apple_refused", result
    console.open(f"/realms/{REALM}/overview")
    warning = console.find('#overview-warnings .warning[data-kind="client_secret_rejected"]').text
    assert warning.startswith("Apple rejected the client secret at ") and "(invalid_client): check the Key ID" in warning
    assert "invalid_client at" in console.text("#apple-facts")
    metrics = requests.get(herald.base + "/metrics", timeout=10).text
    assert f'herald_apple_health_warning{{realm="{REALM}",kind="client_secret_rejected"}} 1' in metrics
    driver.execute_script("document.getElementById('overview-warnings').scrollIntoView()")
    shot(console, "overview-warning", "#overview-warnings .warning")

    # The 7-day window: one bar per day.
    console.find('.windows a[href$="?window=7d"]').click()
    console.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#overview-chart g.bar")) == 7)
    assert csp_violations(driver) == []
