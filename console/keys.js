// Signing keys: the realm's active and retired keys, and rotation.
import { api, seg } from "./api.js";
import { h, form, change, notify, table, time } from "./ui.js";

export async function page(container, [realmId]) {
  const keys = await api("GET", `/realms/${seg(realmId)}/keys`, { query: { limit: 200 } });
  const rotate = form({ id: "rotate-key" }, async (element) => {
    // Rotation changes what every relying party must fetch: a typed confirmation.
    const rotated = await change(element, { title: `Rotate the signing key of ${realmId}`,
      detail: "A new key becomes active; the current one stays published while its tokens can be valid.", confirm: realmId },
    (reason) => api("POST", `/realms/${seg(realmId)}/keys/rotate`, { reason }));
    if (rotated) {
      window.dispatchEvent(new HashChangeEvent("hashchange"));
      notify(`New active key ${rotated.kid}.`);
    }
  }, h("div", { class: "buttons" }, h("button", { type: "submit", class: "danger", id: "rotate-key-button" }, "Rotate key…")));
  container.append(h("h1", {}, `Signing keys — ${realmId}`),
    h("p", { class: "meta" }, `Published at ${location.origin}/api/oauth/${realmId}/jwks.json`),
    table(keys.items, [
      ["Key id", (key) => h("code", {}, key.kid)], ["Algorithm", (key) => key.algorithm], ["Status", (key) => key.status],
      ["Created", (key) => time(key.createdAt)], ["Retired", (key) => time(key.retiredAt)],
      ["Published until", (key) => time(key.publishUntil)],
    ], { id: "key-table" }), rotate);
}
