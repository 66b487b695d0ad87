// Realms: the list, creating one, and every setting of one (PATCH sends only what changed).
import { api, seg } from "./api.js";
import { h, field, form, text, number, checkbox, select, readNumber, change, notify, table, pagedList } from "./ui.js";

export async function list(page) {
  const id = text("", { id: "new-realm-id", placeholder: "acme" });
  const displayName = text("", { id: "new-realm-name", placeholder: "Acme" });
  const create = form({ id: "create-realm" }, async (element) => {
    const body = { id: id.value.trim() };
    if (displayName.value.trim()) body.displayName = displayName.value.trim();
    const created = await change(element, { title: `Create realm ${body.id}` },
      (reason) => api("POST", "/realms", { body, reason }));
    if (created) {
      location.hash = `#/realms/${seg(created.id)}`;
      notify(`Realm ${created.id} created.`);
    }
  }, h("h2", {}, "New realm"), field("Id", "id", id, "Lowercase letters, digits and -; cannot change later."),
  field("Display name", "displayName", displayName),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Create realm")));
  // A token that may not list realms can still open one it knows.
  const goId = text("", { id: "open-realm-id", placeholder: "acme" });
  const go = form({ id: "open-realm", class: "filters" }, () => { location.hash = `#/realms/${seg(goId.value.trim())}/overview`; },
    field("Open a realm by id", "openRealm", goId), h("div", { class: "buttons" }, h("button", { type: "submit" }, "Open")));
  const realms = pagedList((cursor) => api("GET", "/realms", { query: { cursor, limit: 50 } }), (items) => table(items, [
    // A realm opens on its overview (sign-ins and Apple's health); its settings are one link away.
    ["Id", (realm) => h("a", { href: `#/realms/${seg(realm.id)}/overview` }, realm.id)],
    ["Name", (realm) => realm.displayName],
    ["Enabled", (realm) => (realm.enabled ? "yes" : "no")],
    ["Signing", (realm) => realm.signingAlgorithm],
  ], { id: "realm-table" }));
  page.append(h("h1", {}, "Realms"), realms.element, go, create);
  await realms.ready;
}

export async function settings(page, [realmId]) {
  const realm = await api("GET", `/realms/${seg(realmId)}`);
  const inputs = {
    displayName: text(realm.displayName),
    enabled: checkbox(realm.enabled),
    registrationEnabled: checkbox(realm.registrationEnabled),
    emailLinking: select(realm.emailLinking, ["verified", "never"]),
    nonceRequired: checkbox(realm.nonceRequired),
    accessTokenTTL: number(realm.accessTokenTTL),
    refreshTokenTTL: number(realm.refreshTokenTTL),
    refreshIdleTTL: number(realm.refreshIdleTTL, { placeholder: "none" }),
    loginUrl: text(realm.loginUrl, { placeholder: "https://login.example.com/apple" }),
    signingAlgorithm: select(realm.signingAlgorithm, ["ES256", "RS256", "EdDSA"]),
    failuresPerWindow: number(realm.rateLimit.failuresPerWindow),
    windowSeconds: number(realm.rateLimit.windowSeconds),
  };
  const read = (input) => (input.type === "checkbox" ? input.checked : input.value);
  const save = form({ id: "realm-settings" }, async (element) => {
    const body = {};
    for (const name of ["displayName", "enabled", "registrationEnabled", "emailLinking", "nonceRequired", "signingAlgorithm"]) {
      if (read(inputs[name]) !== realm[name]) body[name] = read(inputs[name]);
    }
    for (const name of ["accessTokenTTL", "refreshTokenTTL", "refreshIdleTTL"]) {
      if (readNumber(inputs[name]) !== realm[name]) body[name] = readNumber(inputs[name]);
    }
    const loginUrl = inputs.loginUrl.value.trim() || null;
    if (loginUrl !== realm.loginUrl) body.loginUrl = loginUrl;
    const rateLimit = {};
    for (const name of ["failuresPerWindow", "windowSeconds"]) {
      if (readNumber(inputs[name]) !== realm.rateLimit[name]) rateLimit[name] = readNumber(inputs[name]);
    }
    if (Object.keys(rateLimit).length) body.rateLimit = rateLimit;
    if (!Object.keys(body).length) return notify("Nothing changed.");
    // A new signing algorithm activates a new key: as high-risk as a rotation.
    const confirm = body.signingAlgorithm ? realmId : undefined;
    const updated = await change(element, { title: `Update realm ${realmId}`, detail: `Changes: ${Object.keys(body).join(", ")}`, confirm },
      (reason) => api("PATCH", `/realms/${seg(realmId)}`, { body, reason }));
    if (updated) {
      Object.assign(realm, updated);
      notify(`Realm ${realmId} updated.`);
    }
  },
  field("Display name", "displayName", inputs.displayName),
  field("Enabled (a disabled realm answers 404 on its public routes)", "enabled", inputs.enabled),
  field("Registration enabled (first logins create accounts)", "registrationEnabled", inputs.registrationEnabled),
  field("Email linking", "emailLinking", inputs.emailLinking),
  field("Nonce required for native login", "nonceRequired", inputs.nonceRequired),
  field("Access token TTL (s)", "accessTokenTTL", inputs.accessTokenTTL, "60–86400"),
  field("Refresh token TTL (s)", "refreshTokenTTL", inputs.refreshTokenTTL, "300–31536000: the absolute session lifetime"),
  field("Session idle timeout (s)", "refreshIdleTTL", inputs.refreshIdleTTL, "empty: none"),
  field("Login URL", "loginUrl", inputs.loginUrl, "where third-party authorizations send the user; empty: none"),
  field("Signing algorithm", "signingAlgorithm", inputs.signingAlgorithm, "changing it activates a new key"),
  field("Failed logins per window", "rateLimit.failuresPerWindow", inputs.failuresPerWindow),
  field("Rate-limit window (s)", "rateLimit.windowSeconds", inputs.windowSeconds),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "save-realm" }, "Save settings")));

  const remove = form({ id: "delete-realm", class: "danger-zone" }, async (element) => {
    const deleted = await change(element, { title: `Delete realm ${realmId}`, detail: "Deletes its provider, clients, accounts and keys.", confirm: realmId },
      (reason) => api("DELETE", `/realms/${seg(realmId)}`, { reason }));
    if (deleted) {
      location.hash = "#/realms";
      notify(`Realm ${realmId} deleted.`);
    }
  }, h("h2", {}, "Delete realm"), h("div", { class: "buttons" }, h("button", { type: "submit", class: "danger" }, "Delete realm…")));

  page.append(h("h1", {}, `Realm ${realm.id}`),
    h("p", { class: "meta" }, `Issuer: ${location.origin}/api/oauth/${realm.id}`), save, remove);
}
