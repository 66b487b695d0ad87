// Accounts: search by email and status, one account with its identities and sessions,
// disable or enable it, revoke its sessions, delete it.
import { api, seg } from "./api.js";
import { h, field, form, text, select, change, notify, table, pagedList, time } from "./ui.js";

export async function list(page, [realmId], query) {
  const email = text(query.get("email") ?? "", { id: "account-email", type: "search", placeholder: "someone@example.com" });
  const status = select(query.get("status") ?? "", ["", "active", "disabled", "deleted"], { id: "account-status" });
  const results = h("div", { id: "account-results" });
  const search = async () => {
    const accounts = pagedList((cursor) => api("GET", `/realms/${seg(realmId)}/accounts`,
      { query: { email: email.value.trim(), status: status.value, cursor, limit: 50 } }), (items) => table(items, [
      ["Email", (account) => h("a", { href: `#/realms/${seg(realmId)}/accounts/${seg(account.id)}` }, account.email)],
      ["Name", (account) => [account.name?.givenName, account.name?.familyName].filter(Boolean).join(" ") || "—"],
      ["Status", (account) => account.status],
      ["Created", (account) => time(account.createdAt)],
    ], { id: "account-table" }));
    results.replaceChildren(accounts.element);
    await accounts.ready;
  };
  const filters = form({ id: "account-search", class: "filters" }, search,
    field("Email (exact)", "email", email), field("Status", "status", status),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Search")));
  page.append(h("h1", {}, `Accounts — ${realmId}`),
    h("p", { class: "meta" }, "Accounts are created by logins; here they are found, disabled or deleted."), filters, results);
  await search();
}

export async function detail(page, [realmId, accountId]) {
  const path = `/realms/${seg(realmId)}/accounts/${seg(accountId)}`;
  const [account, sessions] = await Promise.all([api("GET", path), api("GET", `${path}/sessions`)]);
  const rerender = () => window.dispatchEvent(new HashChangeEvent("hashchange"));
  const actions = form({ id: "account-actions" }, () => {}, h("h2", {}, "Actions"), h("div", { class: "buttons" },
    account.status === "deleted" ? null : h("button", { type: "button", id: "toggle-account", onclick: async () => {
      const status = account.status === "active" ? "disabled" : "active";
      const done = await change(actions, { title: `${status === "disabled" ? "Disable" : "Enable"} account ${account.email}`,
        detail: status === "disabled" ? "Its sessions are revoked and its tokens refused." : "" },
      (reason) => api("PATCH", path, { body: { status }, reason }));
      if (done) { rerender(); notify(`Account ${status}.`); }
    } }, account.status === "active" ? "Disable account…" : "Enable account…"),
    h("button", { type: "button", id: "revoke-sessions", onclick: async () => {
      const done = await change(actions, { title: "Revoke every session of this account" },
        (reason) => api("DELETE", `${path}/sessions`, { reason }));
      if (done) { rerender(); notify("Sessions revoked."); }
    } }, "Revoke sessions…"),
    account.status === "deleted" ? null : h("button", { type: "button", class: "danger", id: "delete-account", onclick: async () => {
      const done = await change(actions, { title: `Delete account ${account.email}`,
        detail: "Frees the email, revokes sessions and Apple tokens; cannot be undone.", confirm: account.id },
      (reason) => api("DELETE", path, { reason }));
      if (done) { location.hash = `#/realms/${seg(realmId)}/accounts`; notify("Account deleted."); }
    } }, "Delete account…")));

  const name = [account.name?.givenName, account.name?.familyName].filter(Boolean).join(" ") || "—";
  page.append(h("h1", {}, `Account ${account.email}`),
    h("dl", { class: "facts", id: "account-facts" },
      h("dt", {}, "Id"), h("dd", {}, account.id),
      h("dt", {}, "Status"), h("dd", { id: "account-status-value" }, account.status),
      h("dt", {}, "Email verified"), h("dd", {}, account.emailVerified ? "yes" : "no"),
      h("dt", {}, "Private relay"), h("dd", {}, account.isPrivateEmail ? "yes" : "no"),
      h("dt", {}, "Name"), h("dd", {}, name),
      h("dt", {}, "Created"), h("dd", {}, time(account.createdAt))),
    h("h2", {}, "Identities"),
    table(account.identities, [
      ["Provider", (identity) => identity.provider], ["Subject", (identity) => identity.openId],
      ["Email", (identity) => identity.email ?? "—"], ["Linked", (identity) => time(identity.linkedAt)],
    ], { id: "identity-table" }),
    h("h2", {}, "Sessions"),
    table(sessions.items, [
      ["Client", (item) => item.clientId], ["Scope", (item) => item.scope.join(" ")],
      ["Created", (item) => time(item.createdAt)], ["Last refresh", (item) => time(item.lastRefreshedAt)],
      ["Ends", (item) => time(item.expiresAt)], ["Revoked", (item) => time(item.revokedAt)],
    ], { id: "session-table" }),
    actions);
}
