// DOM helpers shared by the pages. Everything is built with createElement and text nodes;
// no string is ever parsed as markup, so a value from the API (a display name, an audit
// reason) stays text.
import { ApiError } from "./api.js";

/** An element: `attrs` sets attributes, `on*` functions become listeners; children are nodes or text. */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "checked" || name === "value") element[name] = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** A labelled form field whose API name is `name` (where its error is shown). */
export function field(label, name, input, hint) {
  input.id ||= `f-${name.replace(/[^A-Za-z0-9]/g, "-")}`;
  input.name ||= name;
  const caption = h("label", { for: input.id }, label);
  // A checkbox reads best before its label, on one line.
  const check = input.type === "checkbox";
  return h("div", { class: check ? "field check" : "field", "data-field": name },
    check ? [input, caption] : [caption, input], hint ? h("small", {}, hint) : null,
    h("span", { class: "field-error" }));
}

export const text = (value, attrs = {}) => h("input", { type: "text", value: value ?? "", autocomplete: "off", ...attrs });
export const number = (value, attrs = {}) => h("input", { type: "number", value: value ?? "", ...attrs });
export const checkbox = (checked, attrs = {}) => h("input", { type: "checkbox", checked: !!checked, ...attrs });
export const select = (value, options, attrs = {}) =>
  h("select", attrs, options.map((option) => h("option", { value: option, selected: option === value }, option || "any")));
export const lines = (values, attrs = {}) => h("textarea", { rows: 3, ...attrs }, (values ?? []).join("\n"));

/** Non-empty trimmed lines of a textarea. */
export const readLines = (textarea) => textarea.value.split("\n").map((line) => line.trim()).filter(Boolean);
/** A number input: empty → null; anything else as typed, so the API names what is wrong. */
export const readNumber = (input) => (input.value.trim() === "" ? null : Number(input.value));

/** Clears earlier errors, then shows the API's field errors by field and the rest on top. */
export function showError(form, error) {
  for (const slot of form.querySelectorAll(".field-error")) slot.textContent = "";
  for (const item of form.querySelectorAll(".field.invalid")) item.classList.remove("invalid");
  let banner = form.querySelector(".form-error");
  if (!banner) {
    banner = h("p", { class: "form-error", role: "alert" });
    form.prepend(banner);
  }
  banner.textContent = "";
  if (!error) return;
  const unplaced = [];
  if (error instanceof ApiError) {
    for (const [name, problem] of Object.entries(error.fields)) {
      // `redirectUris[2]` belongs to the redirectUris field; `rateLimit.windowSeconds` has its own.
      const target = fieldNamed(form, name) ?? fieldNamed(form, name.replace(/\[\d+\]$/, ""));
      if (target) {
        target.classList.add("invalid");
        target.querySelector(".field-error").textContent = `${name} ${problem}`;
      } else unplaced.push(`${name} ${problem}`);
    }
    const where = error.requestId ? ` (request ${error.requestId})` : "";
    banner.textContent = `${error.status} ${error.code}: ${error.message}${where}` + (unplaced.length ? ` — ${unplaced.join("; ")}` : "");
  } else {
    banner.textContent = String(error.message ?? error);
  }
}

function fieldNamed(form, name) {
  return [...form.querySelectorAll(".field[data-field]")].find((item) => item.dataset.field === name) ?? null;
}

const dialog = () => document.getElementById("change-dialog");

/**
 * Asks for the change reason (required, sent as X-Change-Reason) and, for high-risk changes,
 * that `confirm` be typed. Resolves to the reason, or null when cancelled.
 */
export function askChange(title, detail, confirm) {
  const box = dialog();
  const form = document.getElementById("change-form");
  const reason = document.getElementById("change-reason");
  const typed = document.getElementById("change-confirm");
  const confirmField = document.getElementById("change-confirm-field");
  document.getElementById("change-title").textContent = title;
  document.getElementById("change-detail").textContent = detail ?? "";
  document.getElementById("change-expected").textContent = confirm ?? "";
  confirmField.hidden = !confirm;
  reason.value = "";
  typed.value = "";
  showError(form, null);
  return new Promise((resolve) => {
    const finish = (value) => {
      form.removeEventListener("submit", submit);
      document.getElementById("change-cancel").removeEventListener("click", cancel);
      box.removeEventListener("cancel", cancel);
      box.close();
      resolve(value);
    };
    const fail = (input, message) => {
      const slot = input.closest(".field");
      slot.classList.add("invalid");
      slot.querySelector(".field-error").textContent = message;
    };
    const submit = (event) => {
      event.preventDefault();
      showError(form, null);
      const value = reason.value.trim();
      // Header values must be plain ASCII to reach the server as typed.
      if (!value) return fail(reason, "A reason is required.");
      if (!/^[\x20-\x7e]*$/.test(value)) return fail(reason, "Use plain ASCII characters.");
      if (confirm && typed.value !== confirm) return fail(typed, `Type ${confirm} exactly.`);
      finish(value);
    };
    const cancel = (event) => { event.preventDefault(); finish(null); };
    form.addEventListener("submit", submit);
    document.getElementById("change-cancel").addEventListener("click", cancel);
    box.addEventListener("cancel", cancel);
    box.showModal();
    reason.focus();
  });
}

/**
 * Runs a change: asks for its reason (and confirmation), calls `perform(reason)`, shows API
 * errors on `form`. Resolves to perform's result, or undefined when cancelled or refused.
 */
export async function change(form, { title, detail, confirm }, perform) {
  const reason = await askChange(title, detail, confirm);
  if (reason === null) return undefined;
  try {
    const result = await perform(reason);
    showError(form, null);
    return result ?? true;
  } catch (error) {
    showError(form, error);
    return undefined;
  }
}

/** A short message at the top of the page. */
export function notify(message) {
  const notice = document.getElementById("notice");
  notice.textContent = message;
  notice.hidden = false;
}

export const time = (unix) => (unix === null || unix === undefined ? "—" : new Date(unix * 1000).toISOString().replace(".000Z", "Z"));

/** A table of `rows`, each rendered by `columns` ([header, row → node or text]). */
export function table(rows, columns, attrs = {}) {
  if (!rows.length) return h("p", { class: "empty" }, "Nothing here yet.");
  return h("table", attrs,
    h("thead", {}, h("tr", {}, columns.map(([title]) => h("th", {}, title)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map(([, cell]) => h("td", {}, cell(row)))))));
}

/** A page of a cursor list with a "More" button that loads the next page in place. */
export function pagedList(load, render) {
  const holder = h("div", { class: "paged" });
  const more = h("button", { type: "button", class: "more", hidden: true }, "More");
  let cursor = null;
  const next = async () => {
    try {
      const page = await load(cursor);
      holder.append(render(page.items));
      cursor = page.nextCursor;
      more.hidden = !cursor;
    } catch (error) {
      holder.append(h("p", { class: "form-error", role: "alert" }, `${error.status ?? ""} ${error.code ?? ""}: ${error.message}`));
    }
  };
  more.addEventListener("click", next);
  return { element: h("div", {}, holder, more), ready: next() };
}

/** A form whose submit runs `action` (no browser validation: the API validates and names fields). */
export function form(attrs, action, ...children) {
  const element = h("form", { novalidate: true, ...attrs }, h("p", { class: "form-error", role: "alert" }), ...children);
  element.addEventListener("submit", (event) => { event.preventDefault(); action(element); });
  return element;
}
