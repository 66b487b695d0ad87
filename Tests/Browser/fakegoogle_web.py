"""A fake Google for Sign in with Google on the web, on 127.0.0.1, for the browser stage. One
server serves:
- Google's JWKS at /oauth2/v3/certs (what Herald verifies ID tokens against);
- a fake Google Identity Services script at /gsi/client, and its stylesheet at /gsi/style;
- /gsi/mint?client_id=…&nonce=…, which signs a Google-shaped ID token (CORS: any origin).

The script does, in the page that loads it, what real GIS does in redirect mode
(`data-ux_mode="redirect"` with a `data-login_uri`): it reads `#g_id_onload`, renders a button
(`#google-signin-button`) into `.g_id_signin`, and on a click gets an ID token for
`data-client_id` carrying `data-nonce` verbatim, sets the `g_csrf_token` cookie on the page's
host and POSTs `credential`, `g_csrf_token` and `select_by=btn` as a form to `data-login_uri`.
Everything it loads or fetches lives under /gsi/ on this origin, so the page's CSP must allow
exactly that.

Builds on Tests/Interop/fakegoogle.py (the RSA key, the JWKS and the token minting)."""
import http.server
import json
import os
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Interop"))
import fakegoogle  # noqa: E402

GSI_SCRIPT = r"""(function () {
  "use strict";
  // The origin this script came from: where the token is minted (real GIS: accounts.google.com).
  var origin = new URL(document.currentScript.src).origin;

  function randomHex() {
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function post(action, fields) {
    var form = document.createElement("form");
    form.method = "POST";
    form.action = action;
    Object.keys(fields).forEach(function (name) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.value = fields[name];
      form.appendChild(input);
    });
    document.body.appendChild(form);
    form.submit();
  }

  function signIn(config, button) {
    button.disabled = true;
    var query = new URLSearchParams({client_id: config.clientId});
    if (config.nonce !== null) query.set("nonce", config.nonce);
    fetch(origin + "/gsi/mint?" + query.toString(), {credentials: "omit"})
      .then(function (response) {
        if (!response.ok) throw new Error("fake GIS: mint answered " + response.status);
        return response.json();
      })
      .then(function (minted) {
        // Double-submit: the same random value as a cookie on the page's host and as a field.
        var csrf = randomHex();
        document.cookie = "g_csrf_token=" + csrf + "; path=/";
        post(config.loginUri, {credential: minted.credential, g_csrf_token: csrf, select_by: "btn"});
      })
      .catch(function (error) { console.error(String(error)); button.disabled = false; });
  }

  function start() {
    var onload = document.getElementById("g_id_onload");
    if (!onload) { console.error("fake GIS: no #g_id_onload"); return; }
    var config = {
      clientId: onload.getAttribute("data-client_id"),
      loginUri: onload.getAttribute("data-login_uri"),
      nonce: onload.getAttribute("data-nonce"),
      uxMode: onload.getAttribute("data-ux_mode")
    };
    if (!config.clientId || !config.loginUri || config.uxMode !== "redirect") {
      console.error("fake GIS: #g_id_onload needs data-client_id, data-login_uri and data-ux_mode=redirect");
      return;
    }
    var style = document.createElement("link");
    style.rel = "stylesheet";
    style.href = origin + "/gsi/style";
    document.head.appendChild(style);
    var slot = document.querySelector(".g_id_signin");
    if (!slot) { console.error("fake GIS: no .g_id_signin"); return; }
    var button = document.createElement("button");
    button.type = "button";
    button.id = "google-signin-button";
    button.className = "fake-gsi-button";
    button.textContent = "Sign in with Google";
    button.addEventListener("click", function () { signIn(config, button); });
    slot.appendChild(button);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
""".encode()

GSI_STYLE = b".fake-gsi-button{font:500 14px sans-serif;padding:8px 16px;border:1px solid #dadce0;" \
            b"border-radius:4px;background:#fff;color:#3c4043}"


class FakeGoogleWeb:
    """Google's JWKS and fake GIS on one loopback origin. The signed-in Google account is
    `subject`/`email`/`name` (change them between tests); `mints` lists each /gsi/mint query."""

    def __init__(self, subject="108642097531246800001", email="grace@gmail.example", name="Grace Hopper"):
        self.keys = fakegoogle.GoogleKeys(kid="browser-google-rsa-1")
        self.subject, self.email, self.name = subject, email, name
        self.email_verified = True
        self.mints = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server naming)
                url = urllib.parse.urlsplit(self.path)
                if url.path == fakegoogle.JWKS_PATH:
                    self._send(200, "application/json", fake.keys.jwks_document, {"Cache-Control": "max-age=3600"})
                elif url.path == "/gsi/client":
                    self._send(200, "text/javascript; charset=utf-8", GSI_SCRIPT)
                elif url.path == "/gsi/style":
                    self._send(200, "text/css; charset=utf-8", GSI_STYLE)
                elif url.path == "/gsi/mint":
                    query = dict(urllib.parse.parse_qsl(url.query))
                    fake.mints.append(query)
                    if not query.get("client_id"):
                        self._send(400, "application/json", b'{"error":"client_id required"}', cors=True)
                        return
                    body = json.dumps({"credential": fake.credential(query["client_id"], query.get("nonce"))})
                    self._send(200, "application/json", body.encode(), cors=True)
                else:
                    self._send(404, "text/plain", b"not found")

            def _send(self, status, content_type, body, headers=None, cors=False):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                if cors:
                    self.send_header("Access-Control-Allow-Origin", "*")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def jwks_url(self):
        return self.base + fakegoogle.JWKS_PATH

    @property
    def script_url(self):
        return self.base + "/gsi/client"

    def credential(self, client_id, nonce, **claims):
        """The ID token GIS hands the page for the current account (`claims` override)."""
        token_claims = self.keys.claims(client_id, self.subject, nonce, email=self.email,
                                        email_verified=self.email_verified, name=self.name)
        token_claims.update(claims)
        return self.keys.sign(token_claims)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


if __name__ == "__main__":
    # By hand: run the fake Google until Ctrl-C, then start herald with the two URLs it prints.
    fake = FakeGoogleWeb()
    print(f"fake Google: --google-jwks-url {fake.jwks_url} --google-gsi-script-url {fake.script_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.stop()
