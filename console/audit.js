// The audit log: every admin change, newest first, with filters and a before/after view.
import { api } from "./api.js";
import { h, field, form, text, table, pagedList, time } from "./ui.js";

const show = (value) => (value === null || value === undefined ? "—" : typeof value === "string" ? value : JSON.stringify(value));

/** The changed fields as rows: name, the value before (struck) and after. */
function diff(changes) {
  const names = Object.keys(changes ?? {}).sort();
  if (!names.length) return "—";
  const rows = h("table", { class: "diff" }, h("tbody", {}, names.map((name) => h("tr", {},
    h("th", {}, name), h("td", { class: "before" }, show(changes[name].before)), h("td", { class: "after" }, show(changes[name].after))))));
  // A create or delete lists every field; fold those so the changes that matter stand out.
  return h("details", { open: names.length <= 4 }, h("summary", {}, names.length === 1 ? "1 field" : `${names.length} fields`), rows);
}

export async function page(container, _params, query) {
  const filters = {
    realm: text(query.get("realm") ?? "", { placeholder: "acme" }), action: text(query.get("action") ?? "", { placeholder: "client.create" }),
    actor: text(query.get("actor") ?? "", { placeholder: "env" }), target: text(query.get("target") ?? "", { placeholder: "realms/acme/clients/web" }),
  };
  const results = h("div", { id: "audit-results" });
  const search = async () => {
    const values = Object.fromEntries(Object.entries(filters).map(([name, input]) => [name, input.value.trim()]));
    const entries = pagedList((cursor) => api("GET", "/audit", { query: { ...values, cursor, limit: 50 } }), (items) => table(items, [
      ["At", (entry) => time(entry.at)], ["Actor", (entry) => entry.actor], ["Action", (entry) => h("code", {}, entry.action)],
      ["Target", (entry) => entry.target], ["Reason", (entry) => entry.reason ?? "—"], ["Changes", (entry) => diff(entry.changes)],
    ], { id: "audit-table" }));
    results.replaceChildren(entries.element);
    await entries.ready;
  };
  const filterForm = form({ id: "audit-filters", class: "filters" }, search,
    field("Realm", "realm", filters.realm), field("Action", "action", filters.action),
    field("Actor", "actor", filters.actor), field("Target", "target", filters.target),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Filter")));
  container.append(h("h1", {}, "Audit log"), h("p", { class: "meta" }, "Secrets appear as [redacted]; account emails as hashes."),
    filterForm, results);
  await search();
}
