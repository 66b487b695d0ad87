// The realm's Sign in with Google provider. PUT replaces the whole configuration: the client
// ids (web, Android, iOS) whose Google ID tokens the realm accepts and an optional Workspace
// domain. Nothing in it is secret.
import { api, ApiError, seg } from "./api.js";
import { h, field, form, text, checkbox, lines, readLines, change, notify, showError } from "./ui.js";

export async function page(container, [realmId]) {
  let provider = null;
  try {
    provider = await api("GET", `/realms/${seg(realmId)}/providers/google`);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
  const current = provider ?? { enabled: true, clientIds: [], hostedDomain: null };

  const inputs = {
    enabled: checkbox(current.enabled),
    clientIds: lines(current.clientIds, { placeholder: "123456789012-abc.apps.googleusercontent.com" }),
    hostedDomain: text(current.hostedDomain, { placeholder: "example.com" }),
  };

  const save = form({ id: "google-provider" }, async (element) => {
    const clientIds = readLines(inputs.clientIds);
    const body = {
      enabled: inputs.enabled.checked,
      clientIds,
      hostedDomain: inputs.hostedDomain.value.trim() || null,
    };
    // Client ids decide which apps' Google tokens the realm accepts: a typed confirmation.
    const idsChanged = JSON.stringify([...clientIds].sort()) !== JSON.stringify([...current.clientIds].sort());
    const saved = await change(element, {
      title: `Save the Google provider of ${realmId}`,
      detail: idsChanged ? `Accepted client IDs become: ${clientIds.join(", ") || "(none)"}` : "",
      confirm: idsChanged ? realmId : undefined,
    }, (reason) => api("PUT", `/realms/${seg(realmId)}/providers/google`, { body, reason }));
    if (saved) {
      Object.assign(current, saved);
      provider = saved;
      state.textContent = `Last changed ${new Date(saved.updatedAt * 1000).toISOString()}`;
      notify(`Google provider of ${realmId} saved.`);
    }
  },
  field("Enabled", "enabled", inputs.enabled),
  field("Client IDs (one per line)", "clientIds", inputs.clientIds,
    "the web, Android and iOS OAuth client IDs; exact, case-sensitive"),
  field("Hosted domain", "hostedDomain", inputs.hostedDomain, "only accounts of this Google Workspace domain; empty for any account"),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "save-google" }, "Save provider")));

  const remove = form({ id: "delete-google", class: "danger-zone" }, async (element) => {
    if (!provider) return showError(element, new Error("No provider is configured."));
    const deleted = await change(element, { title: `Delete the Google provider of ${realmId}`, detail: "Google logins stop at once.", confirm: realmId },
      (reason) => api("DELETE", `/realms/${seg(realmId)}/providers/google`, { reason }));
    if (deleted) {
      notify("Google provider deleted.");
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    }
  }, h("div", { class: "buttons" }, h("button", { type: "submit", class: "danger" }, "Delete provider…")));

  const state = h("p", { id: "google-provider-state", class: "meta" },
    provider ? `Last changed ${new Date(provider.updatedAt * 1000).toISOString()}` : "Not configured yet.");
  container.append(h("h1", {}, `Google provider — ${realmId}`), state, save, remove);
}
