// A realm's security events: logins, token reuse, account status changes.
import { api, seg } from "./api.js";
import { h, field, form, select, table, pagedList, time } from "./ui.js";

const TYPES = ["", "login.succeeded", "login.failed", "refresh_token.reused", "authorization_code.reused",
  "account.disabled", "account.enabled", "account.deleted"];

export async function page(container, [realmId]) {
  const type = select("", TYPES, { id: "event-type" });
  const results = h("div", { id: "event-results" });
  const search = async () => {
    const events = pagedList((cursor) => api("GET", `/realms/${seg(realmId)}/events`, { query: { type: type.value, cursor, limit: 50 } }),
      (items) => table(items, [
        ["At", (event) => time(event.at)], ["Type", (event) => h("code", {}, event.type)], ["Reason", (event) => event.reason ?? "—"],
        ["Account", (event) => (event.accountId ? h("a", { href: `#/realms/${seg(realmId)}/accounts/${seg(event.accountId)}` }, event.accountId) : "—")],
        ["Client", (event) => event.clientId ?? "—"], ["IP", (event) => event.clientIp ?? "—"], ["Actor", (event) => event.actor ?? "—"],
      ], { id: "event-table" }));
    results.replaceChildren(events.element);
    await events.ready;
  };
  container.append(h("h1", {}, `Security events — ${realmId}`),
    form({ id: "event-filters", class: "filters" }, search, field("Type", "type", type),
      h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Filter"))), results);
  await search();
}
