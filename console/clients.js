// Client apps: list, create, edit, rotate the secret, disable, delete. A client secret is
// shown once, right after the response that made it, and is held nowhere but that panel.
import { api, seg } from "./api.js";
import { h, field, form, text, number, checkbox, lines, readLines, readNumber, change, notify, table, pagedList } from "./ui.js";

// The secret of the create answer, handed to the detail page once and then forgotten.
let freshSecret = null;

function secretPanel(clientId, secret) {
  const panel = h("section", { id: "client-secret-once", class: "secret" },
    h("h2", {}, "Client secret — shown once"),
    h("p", {}, `Store it now in the backend of ${clientId}; Herald keeps only its hash and cannot show it again.`),
    h("code", { id: "client-secret" }, secret),
    h("div", { class: "buttons" }, h("button", { type: "button", id: "secret-stored", onclick: () => panel.remove() }, "I have stored it")));
  return panel;
}

const scopesOf = (input) => input.value.split(/[\s,]+/).filter(Boolean);

export async function list(page, [realmId]) {
  const inputs = {
    clientId: text("", { placeholder: "web-backend" }), name: text("", { placeholder: "Web backend" }),
    firstParty: checkbox(false), confidential: checkbox(false), redirectUris: lines([]),
    allowedScopes: text("openid profile email"), ipBinding: checkbox(false),
  };
  const create = form({ id: "create-client" }, async (element) => {
    const body = {
      clientId: inputs.clientId.value.trim(), name: inputs.name.value.trim(), firstParty: inputs.firstParty.checked,
      confidential: inputs.confidential.checked, redirectUris: readLines(inputs.redirectUris),
      allowedScopes: scopesOf(inputs.allowedScopes), ipBinding: inputs.ipBinding.checked,
    };
    const created = await change(element, { title: `Create client ${body.clientId} in ${realmId}` },
      (reason) => api("POST", `/realms/${seg(realmId)}/clients`, { body, reason }));
    if (created) {
      freshSecret = created.clientSecret ? { clientId: created.clientId, secret: created.clientSecret } : null;
      location.hash = `#/realms/${seg(realmId)}/clients/${seg(created.clientId)}`;
    }
  }, h("h2", {}, "New client"),
  field("Client ID", "clientId", inputs.clientId), field("Name", "name", inputs.name),
  field("First party (may use native login directly)", "firstParty", inputs.firstParty),
  field("Confidential (has a secret)", "confidential", inputs.confidential),
  field("Redirect URIs (one per line)", "redirectUris", inputs.redirectUris),
  field("Allowed scopes", "allowedScopes", inputs.allowedScopes, "space-separated"),
  field("Bind sessions to the client IP", "ipBinding", inputs.ipBinding),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Create client")));
  const clients = pagedList((cursor) => api("GET", `/realms/${seg(realmId)}/clients`, { query: { cursor, limit: 100 } }),
    (items) => table(items, [
      ["Client ID", (client) => h("a", { href: `#/realms/${seg(realmId)}/clients/${seg(client.clientId)}` }, client.clientId)],
      ["Name", (client) => client.name],
      ["Kind", (client) => [client.firstParty ? "first party" : "third party", client.confidential ? "confidential" : "public"].join(", ")],
      ["Enabled", (client) => (client.enabled ? "yes" : "no")],
    ], { id: "client-table" }));
  page.append(h("h1", {}, `Clients — ${realmId}`), clients.element, create);
  await clients.ready;
}

export async function detail(page, [realmId, clientId]) {
  const path = `/realms/${seg(realmId)}/clients/${seg(clientId)}`;
  const client = await api("GET", path);
  const secret = freshSecret?.clientId === clientId ? freshSecret.secret : null;
  freshSecret = null;
  const inputs = {
    name: text(client.name), firstParty: checkbox(client.firstParty), confidential: checkbox(client.confidential),
    redirectUris: lines(client.redirectUris), allowedScopes: text(client.allowedScopes.join(" ")),
    enabled: checkbox(client.enabled), ipBinding: checkbox(client.ipBinding),
    accessTokenTTL: number(client.accessTokenTTL, { placeholder: "realm's" }),
    refreshTokenTTL: number(client.refreshTokenTTL, { placeholder: "realm's" }),
    refreshIdleTTL: number(client.refreshIdleTTL, { placeholder: "realm's" }),
  };
  const secretHolder = h("div", {}, secret ? secretPanel(clientId, secret) : null);
  const save = form({ id: "client-settings" }, async (element) => {
    const values = {
      name: inputs.name.value.trim(), firstParty: inputs.firstParty.checked, confidential: inputs.confidential.checked,
      redirectUris: readLines(inputs.redirectUris), allowedScopes: scopesOf(inputs.allowedScopes),
      enabled: inputs.enabled.checked, ipBinding: inputs.ipBinding.checked,
      accessTokenTTL: readNumber(inputs.accessTokenTTL), refreshTokenTTL: readNumber(inputs.refreshTokenTTL),
      refreshIdleTTL: readNumber(inputs.refreshIdleTTL),
    };
    const body = Object.fromEntries(Object.entries(values).filter(([name, value]) => JSON.stringify(value) !== JSON.stringify(client[name])));
    if (!Object.keys(body).length) return notify("Nothing changed.");
    const updated = await change(element, { title: `Update client ${clientId}`, detail: `Changes: ${Object.keys(body).join(", ")}` },
      (reason) => api("PATCH", path, { body, reason }));
    if (updated) {
      Object.assign(client, updated);
      notify(`Client ${clientId} updated.`);
    }
  },
  field("Name", "name", inputs.name),
  field("First party", "firstParty", inputs.firstParty),
  field("Confidential", "confidential", inputs.confidential),
  field("Redirect URIs (one per line)", "redirectUris", inputs.redirectUris),
  field("Allowed scopes", "allowedScopes", inputs.allowedScopes, "space-separated"),
  field("Enabled", "enabled", inputs.enabled),
  field("Bind sessions to the client IP", "ipBinding", inputs.ipBinding),
  field("Access token TTL override (s)", "accessTokenTTL", inputs.accessTokenTTL, "empty: the realm's"),
  field("Refresh token TTL override (s)", "refreshTokenTTL", inputs.refreshTokenTTL, "empty: the realm's"),
  field("Session idle timeout override (s)", "refreshIdleTTL", inputs.refreshIdleTTL, "empty: the realm's"),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "save-client" }, "Save client")));

  const actions = form({ id: "client-actions" }, () => {},
    h("h2", {}, "Actions"),
    h("div", { class: "buttons" },
      h("button", { type: "button", id: "rotate-secret", onclick: async () => {
        const rotated = await change(actions, { title: `Rotate the secret of ${clientId}`, detail: "The current secret stops working at once." },
          (reason) => api("POST", `${path}/secret`, { reason }));
        if (rotated) secretHolder.replaceChildren(secretPanel(clientId, rotated.clientSecret));
      } }, "Rotate secret…"),
      h("button", { type: "button", id: "toggle-client", onclick: async () => {
        const enabled = !client.enabled;
        const updated = await change(actions, { title: `${enabled ? "Enable" : "Disable"} client ${clientId}`,
          detail: enabled ? "" : "Its sessions are revoked." }, (reason) => api("PATCH", path, { body: { enabled }, reason }));
        if (updated) window.dispatchEvent(new HashChangeEvent("hashchange"));
      } }, client.enabled ? "Disable client…" : "Enable client…"),
      h("button", { type: "button", class: "danger", id: "delete-client", onclick: async () => {
        const deleted = await change(actions, { title: `Delete client ${clientId}`, detail: "Its sessions are revoked; this cannot be undone.", confirm: clientId },
          (reason) => api("DELETE", path, { reason }));
        if (deleted) {
          location.hash = `#/realms/${seg(realmId)}/clients`;
          notify(`Client ${clientId} deleted.`);
        }
      } }, "Delete client…")));

  page.append(h("h1", {}, `Client ${clientId}`),
    h("p", { class: "meta" }, `${client.confidential ? "Confidential" : "Public"} client of ${realmId}, ${client.enabled ? "enabled" : "disabled"}.`),
    secretHolder, save, actions);
}
