"""What the console browser test and the screenshot script share: a throwaway `herald serve`
with a fake Apple JWKS on loopback, a headless Chromium, and the console's moves (sign in,
answer the change dialog, wait for a page)."""
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import requests
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Interop"))
import fakeapple  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Herald:
    """The real binary on a free loopback port, with its own SQLite file and admin token, and
    its own fake Apple JWKS unless `jwks_url` names one (then `extra` flags may add, e.g.,
    `--apple-base-url`)."""

    def __init__(self, binary, jwks_url=None, extra=()):
        self.apple = None if jwks_url else fakeapple.FakeApple("console-kid")
        self.folder = tempfile.mkdtemp(prefix="herald-console-")
        self.token = secrets.token_urlsafe(32)
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.log = open(os.path.join(self.folder, "herald.log"), "wb")
        self.process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--public-url", self.base,
             "--database", f"sqlite:{self.folder}/herald.db", "--apple-jwks-url", jwks_url or self.apple.url,
             *extra],
            env=dict(os.environ, HERALD_ADMIN_TOKEN=self.token, HERALD_LOG_LEVEL="warning"),
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(self.base + "/healthz", timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert self.process.poll() is None and time.monotonic() < deadline, "herald did not start"
            time.sleep(0.1)  # polling for start-up

    def admin(self, method, path, body=None):
        """An admin API call outside the browser, to check what the console did."""
        return requests.request(method, self.base + "/api/admin" + path, json=body, timeout=10,
                                headers={"Authorization": f"Bearer {self.token}"})

    def log_text(self):
        self.log.flush()
        with open(os.path.join(self.folder, "herald.log"), "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=15)
        self.log.close()
        if self.apple:
            self.apple.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def chromium(width=1280, height=900):
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}"]:
        options.add_argument(argument)
    # The browser's console log shows CSP violations ("Refused to …"); the test reads it.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(options=options, service=service)


class Console:
    """The console in `driver`, as an operator uses it."""

    def __init__(self, driver, herald):
        self.driver = driver
        self.herald = herald

    def wait(self, condition, timeout=10):
        return WebDriverWait(self.driver, timeout).until(condition)

    def find(self, css):
        return self.wait(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def open(self, route):
        self.driver.get(f"{self.herald.base}/console/#{route}")

    def go(self, route):
        """Navigates inside the already loaded console (a hash change, no reload)."""
        self.driver.execute_script("location.hash = arguments[0]", route)

    def type(self, css, value):
        element = self.find(css)
        element.clear()
        element.send_keys(value)
        return element

    def sign_in(self, token=None):
        self.open("/realms")
        self.type("#sign-in input[type=password]", token or self.herald.token)
        self.find("#sign-in button[type=submit]").click()

    def submit(self, form_css, reason, confirm=None):
        """Submits a form (or clicks a button), then answers the change dialog."""
        element = self.find(form_css)
        if element.tag_name == "form":
            element.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        else:
            element.click()
        self.answer(reason, confirm)

    def answer(self, reason, confirm=None):
        self.type("#change-reason", reason)
        if confirm is not None:
            self.type("#change-confirm", confirm)
        self.find("#change-apply").click()
        self.wait(lambda driver: not driver.find_element(By.ID, "change-dialog").get_attribute("open"))

    def text(self, css):
        return self.find(css).text

    def field_error(self, form_css, field):
        selector = f'{form_css} .field[data-field="{field}"] .field-error'
        self.wait(lambda driver: driver.find_element(By.CSS_SELECTOR, selector).text.strip() != "")
        return self.driver.find_element(By.CSS_SELECTOR, selector).text
