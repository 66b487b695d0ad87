// The realm's Sign in with Apple provider. PUT replaces the whole configuration, except the
// private key: it is write-only, sent only when a .p8 file is chosen (or removal is ticked).
import { api, ApiError, seg } from "./api.js";
import { h, field, form, text, checkbox, lines, readLines, change, notify, showError } from "./ui.js";

export async function page(container, [realmId]) {
  let provider = null;
  try {
    provider = await api("GET", `/realms/${seg(realmId)}/providers/apple`);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
  const current = provider ?? { enabled: true, clientId: "", audiences: [], teamId: null, keyId: null,
    privateKeyConfigured: false, scopes: ["name", "email"], returnUrls: [] };

  const audiences = [...current.audiences];
  const audienceList = h("ul", { id: "audience-list", class: "chips" });
  const drawAudiences = () => audienceList.replaceChildren(...audiences.map((audience, index) => h("li", {}, h("code", {}, audience),
    h("button", { type: "button", class: "remove-audience", "aria-label": `Remove ${audience}`,
      onclick: () => { audiences.splice(index, 1); drawAudiences(); } }, "Remove"))));
  drawAudiences();
  const newAudience = text("", { id: "new-audience", placeholder: "com.example.ios" });
  const addAudience = () => {
    const value = newAudience.value.trim();
    if (value && !audiences.includes(value)) audiences.push(value);
    newAudience.value = "";
    drawAudiences();
  };
  newAudience.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); addAudience(); } });

  const inputs = {
    enabled: checkbox(current.enabled),
    clientId: text(current.clientId, { placeholder: "com.example.web" }),
    teamId: text(current.teamId, { placeholder: "ABCDE12345" }),
    keyId: text(current.keyId, { placeholder: "KEY1234567" }),
    privateKey: h("input", { type: "file", accept: ".p8,.pem" }),
    removeKey: checkbox(false),
    scopeName: checkbox(current.scopes.includes("name")),
    scopeEmail: checkbox(current.scopes.includes("email")),
    returnUrls: lines(current.returnUrls),
  };
  const callback = `${location.origin}/api/oauth/${realmId}/apple/callback`;

  const save = form({ id: "apple-provider" }, async (element) => {
    const body = {
      enabled: inputs.enabled.checked,
      clientId: inputs.clientId.value.trim(),
      audiences: [...audiences],
      teamId: inputs.teamId.value.trim() || null,
      keyId: inputs.keyId.value.trim() || null,
      scopes: [inputs.scopeName.checked && "name", inputs.scopeEmail.checked && "email"].filter(Boolean),
      returnUrls: readLines(inputs.returnUrls),
    };
    const file = inputs.privateKey.files[0];
    if (file) body.privateKey = await file.text();
    else if (inputs.removeKey.checked) body.privateKey = null;
    // Audiences decide which apps' Apple tokens the realm accepts: a typed confirmation.
    const audiencesChanged = JSON.stringify([...audiences].sort()) !== JSON.stringify([...current.audiences].sort());
    const saved = await change(element, {
      title: `Save the Apple provider of ${realmId}`,
      detail: audiencesChanged ? `Accepted Bundle IDs become: ${audiences.join(", ") || "(none)"}` : "",
      confirm: audiencesChanged ? realmId : undefined,
    }, (reason) => api("PUT", `/realms/${seg(realmId)}/providers/apple`, { body, reason }));
    // The key leaves the page with the request: clear the file input either way.
    inputs.privateKey.value = "";
    if (saved) {
      Object.assign(current, saved);
      provider = saved;
      inputs.removeKey.checked = false;
      keyState.textContent = saved.privateKeyConfigured ? "A private key is stored." : "No private key stored.";
      notify(`Apple provider of ${realmId} saved.`);
    }
  },
  field("Enabled", "enabled", inputs.enabled),
  field("Services ID (client ID)", "clientId", inputs.clientId, "the web flow's client_id and the primary accepted audience"),
  h("div", { class: "field", "data-field": "audiences" }, h("label", { for: "new-audience" }, "Bundle IDs (accepted audiences)"),
    audienceList, h("div", { class: "inline" }, newAudience, h("button", { type: "button", id: "add-audience", onclick: addAudience }, "Add")),
    h("small", {}, "exact, case-sensitive; no wildcards"), h("span", { class: "field-error" })),
  field("Team ID", "teamId", inputs.teamId),
  field("Key ID", "keyId", inputs.keyId),
  field("Private key (.p8, write-only)", "privateKey", inputs.privateKey),
  field("Remove the stored private key", "removePrivateKey", inputs.removeKey),
  h("fieldset", { class: "field", "data-field": "scopes" }, h("legend", {}, "Scopes"),
    h("label", {}, inputs.scopeName, " name"), h("label", {}, inputs.scopeEmail, " email"), h("span", { class: "field-error" })),
  field("Return URLs (one per line)", "returnUrls", inputs.returnUrls, `as registered at Apple, e.g. ${callback}`),
  h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "save-apple" }, "Save provider")));

  const keyState = h("p", { id: "private-key-state", class: "meta" },
    current.privateKeyConfigured ? "A private key is stored." : "No private key stored.");
  const remove = form({ id: "delete-apple", class: "danger-zone" }, async (element) => {
    if (!provider) return showError(element, new Error("No provider is configured."));
    const deleted = await change(element, { title: `Delete the Apple provider of ${realmId}`, detail: "Apple logins stop at once.", confirm: realmId },
      (reason) => api("DELETE", `/realms/${seg(realmId)}/providers/apple`, { reason }));
    if (deleted) {
      notify("Apple provider deleted.");
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    }
  }, h("div", { class: "buttons" }, h("button", { type: "submit", class: "danger" }, "Delete provider…")));

  container.append(h("h1", {}, `Apple provider — ${realmId}`),
    h("p", { class: "meta" }, provider ? `Last changed ${new Date(provider.updatedAt * 1000).toISOString()}` : "Not configured yet."),
    keyState, save, remove);
}
