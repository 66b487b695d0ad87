// The admin API client. The admin token is kept in sessionStorage and sent as a Bearer
// header, never as a cookie: nothing is ambient, so another site cannot make the browser send
// it (no CSRF surface), and it is gone when the tab closes. The risk left is script running
// in this page (XSS), which the console's CSP (script-src 'self', nothing inline) and the
// DOM-only rendering in ui.js (no string parsed as markup) keep out.
const TOKEN_KEY = "herald.adminToken";

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** An answer outside 2xx, from Herald's error envelope: `fields` maps field → problem. */
export class ApiError extends Error {
  constructor(status, envelope) {
    super(envelope?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = envelope?.code ?? "http_error";
    this.fields = envelope?.details?.fields ?? {};
    this.requestId = envelope?.requestId ?? null;
  }
}

// Called on 401 so a revoked or expired token sends the operator back to sign-in.
let onUnauthorized = () => {};
export function whenUnauthorized(handler) { onUnauthorized = handler; }

/**
 * Calls `/api/admin{path}`. `reason` becomes X-Change-Reason; `query` values that are empty
 * are left out, so an empty filter means "any".
 */
export async function api(method, path, { body, reason, query, token } = {}) {
  const headers = { Accept: "application/json", Authorization: `Bearer ${token ?? session.token() ?? ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (reason) headers["X-Change-Reason"] = reason;
  let url = `/api/admin${path}`;
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") search.set(name, value);
  }
  if ([...search].length) url += `?${search}`;
  const response = await fetch(url, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit", cache: "no-store",
  });
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!response.ok) {
    const error = new ApiError(response.status, data);
    if (response.status === 401 && token === undefined) onUnauthorized(error);
    throw error;
  }
  return data;
}

/** A path segment, escaped (ids come from the API or the operator). */
export const seg = (value) => encodeURIComponent(value);
