// The console's entry point: sign-in, navigation and the hash router (#/realms/acme/clients).
// Hash routes keep every page at /console/, so the server serves one document and the
// browser never sends the route anywhere.
import { api, session, whenUnauthorized } from "./api.js";
import { h, field, form, showError, notify } from "./ui.js";
import * as realms from "./realms.js";
import * as apple from "./apple.js";
import * as google from "./google.js";
import * as clients from "./clients.js";
import * as accounts from "./accounts.js";
import * as keys from "./keys.js";
import * as audit from "./audit.js";
import * as events from "./events.js";
import * as overview from "./overview.js";

const routes = [
  [/^#\/realms$/, realms.list],
  [/^#\/realms\/([^/]+)$/, realms.settings],
  [/^#\/realms\/([^/]+)\/overview$/, overview.page],
  [/^#\/realms\/([^/]+)\/apple$/, apple.page],
  [/^#\/realms\/([^/]+)\/google$/, google.page],
  [/^#\/realms\/([^/]+)\/clients$/, clients.list],
  [/^#\/realms\/([^/]+)\/clients\/([^/]+)$/, clients.detail],
  [/^#\/realms\/([^/]+)\/accounts$/, accounts.list],
  [/^#\/realms\/([^/]+)\/accounts\/([^/]+)$/, accounts.detail],
  [/^#\/realms\/([^/]+)\/keys$/, keys.page],
  [/^#\/realms\/([^/]+)\/events$/, events.page],
  [/^#\/audit$/, audit.page],
];

const main = () => document.getElementById("main");

function navigation(realm) {
  const nav = document.getElementById("nav");
  const link = (href, label) => h("a", { href, class: location.hash === href ? "current" : null }, label);
  const items = [link("#/realms", "Realms")];
  if (realm) {
    const base = `#/realms/${encodeURIComponent(realm)}`;
    items.push(h("span", { class: "realm-name" }, realm), link(`${base}/overview`, "Overview"), link(base, "Settings"), link(`${base}/apple`, "Apple"),
      link(`${base}/google`, "Google"), link(`${base}/clients`, "Clients"), link(`${base}/accounts`, "Accounts"),
      link(`${base}/keys`, "Keys"), link(`${base}/events`, "Events"), link(`#/audit?realm=${encodeURIComponent(realm)}`, "Audit"));
  } else {
    items.push(link("#/audit", "Audit"));
  }
  nav.replaceChildren(...items);
}

function signInPage(message) {
  document.getElementById("nav").replaceChildren();
  document.getElementById("sign-out").hidden = true;
  const token = h("input", { type: "password", autocomplete: "off", spellcheck: "false" });
  const signIn = form({ id: "sign-in" }, async (element) => {
    try {
      // Any admin read proves the token; nothing is stored until it does. A 403 is a valid
      // token that may not list every realm (one scoped to some realms): let it in.
      await api("GET", "/realms", { query: { limit: 1 }, token: token.value.trim() }).catch((error) => {
        if (error.status !== 403) throw error;
      });
      session.signIn(token.value.trim());
      // Stay on the page the operator asked for (a deep link), else render's default.
      render();
    } catch (error) {
      showError(element, error);
    }
  }, field("Admin token", "token", token, "HERALD_ADMIN_TOKEN or one from `herald admin create-token`. Kept in this tab only."),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Sign in")));
  main().replaceChildren(h("h1", {}, "Sign in"), message ? h("p", { class: "form-error" }, message) : "", signIn);
  token.focus();
}

async function render() {
  document.getElementById("notice").hidden = true;
  if (!session.token()) return signInPage();
  document.getElementById("sign-out").hidden = false;
  const [path, search] = (location.hash || "#/realms").split("?");
  const query = new URLSearchParams(search ?? "");
  for (const [pattern, page] of routes) {
    const match = path.match(pattern);
    if (!match) continue;
    const params = match.slice(1).map(decodeURIComponent);
    navigation(params[0] ?? query.get("realm"));
    const container = h("div", { class: "page" });
    main().replaceChildren(container);
    try {
      await page(container, params, query);
    } catch (error) {
      container.append(h("p", { class: "form-error", role: "alert" }, `${error.status ?? ""} ${error.code ?? ""}: ${error.message}`));
    }
    return;
  }
  location.hash = "#/realms";
}

whenUnauthorized(() => {
  session.signOut();
  signInPage("The admin token was refused (401). Sign in again.");
});

document.getElementById("sign-out").addEventListener("click", () => {
  session.signOut();
  signInPage();
  notify("Signed out.");
});
window.addEventListener("hashchange", render);
render();
