// A realm's landing page: sign-ins over the last 24 hours or 7 days as an SVG bar chart drawn
// here (no library, nothing inline: the CSP stays 'self'), the same numbers as tables, Apple's
// health and the warnings the server found. Hovering or focusing a bar shows its numbers in
// the read-out under the chart (text, announced politely), so no positioned tooltip is needed.
import { api, seg } from "./api.js";
import { h, select, table, time } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
const OUTCOMES = [["success", "succeeded"], ["rejected", "refused"], ["error", "failed on our side or Apple's"]];

/** An SVG element (h() makes HTML ones). */
function svg(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const pad = (value) => String(value).padStart(2, "0");
/** A slot's label: `14:00` by hour, `Dec 6` by day (UTC, like every time in the console). */
function slotLabel(start, slotSeconds) {
  const date = new Date(start * 1000);
  if (slotSeconds === 3600) return `${pad(date.getUTCHours())}:00`;
  return date.toLocaleDateString("en", { month: "short", day: "numeric", timeZone: "UTC" });
}

/** The slot's counts of one provider and door ("" for all), summed by outcome. */
function slotSums(slot, door) {
  const counts = door ? slot.counts.filter((count) => `${count.provider} · ${count.door}` === door) : slot.counts;
  const sums = { success: 0, rejected: 0, error: 0, reasons: new Map(), counts };
  for (const count of counts) {
    sums[["success", "rejected"].includes(count.outcome) ? count.outcome : "error"] += count.count;
    const key = `${count.outcome}: ${count.reason}`;
    sums.reasons.set(key, (sums.reasons.get(key) ?? 0) + count.count);
  }
  return sums;
}

/** What a bar says, in words: the slot, each outcome, then the reasons. */
function describe(slot, sums, slotSeconds) {
  const when = slotSeconds === 3600 ? `${time(slot.start).slice(0, 16).replace("T", " ")} UTC` : `${time(slot.start).slice(0, 10)} (UTC day)`;
  const outcomes = OUTCOMES.map(([key, word]) => `${sums[key]} ${word}`).join(", ");
  const reasons = [...sums.reasons].map(([reason, count]) => `${reason} ${count}`).join(", ");
  return `${when}: ${outcomes}${reasons ? ` — ${reasons}` : ""}`;
}

/** The stacked bar chart of the slots; `readout` shows the numbers of the bar under the pointer or focus. */
function chart(overview, door, readout) {
  const width = 720, height = 220, left = 40, bottom = 24, top = 8;
  const slots = overview.slots.map((slot) => ({ slot, sums: slotSums(slot, door) }));
  const peak = Math.max(1, ...slots.map(({ sums }) => sums.success + sums.rejected + sums.error));
  const step = (width - left) / slots.length;
  const barWidth = Math.max(2, step * 0.7);
  const scale = (value) => (value / peak) * (height - bottom - top);
  const bars = slots.map(({ slot, sums }, index) => {
    const x = left + index * step + (step - barWidth) / 2;
    let y = height - bottom;
    const parts = OUTCOMES.map(([key]) => {
      const size = scale(sums[key]);
      y -= size;
      return size > 0 ? svg("rect", { class: `bar-${key}`, x: x.toFixed(1), y: y.toFixed(1), width: barWidth.toFixed(1), height: size.toFixed(1) }) : null;
    });
    const words = describe(slot, sums, overview.slotSeconds);
    const show = () => { readout.textContent = words; };
    return svg("g", { class: "bar", tabindex: 0, role: "img", "aria-label": words, "data-start": slot.start,
      "data-success": sums.success, "data-rejected": sums.rejected, "data-error": sums.error,
      onmouseenter: show, onfocus: show },
    svg("title", {}, words),
    // The whole column answers the pointer, even where the bar is short or empty.
    svg("rect", { class: "bar-hit", x: (left + index * step).toFixed(1), y: top, width: step.toFixed(1), height: height - bottom - top }),
    parts);
  });
  const every = overview.slotSeconds === 3600 ? 6 : 1;
  const labels = slots.map(({ slot }, index) => (index % every === 0
    ? svg("text", { class: "axis", x: (left + index * step + step / 2).toFixed(1), y: height - 6, "text-anchor": "middle" },
      slotLabel(slot.start, overview.slotSeconds))
    : null));
  return svg("svg", { id: "overview-chart", viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": `Sign-ins per ${overview.slotSeconds === 3600 ? "hour" : "day"}, by outcome` },
  svg("line", { class: "axis-line", x1: left, y1: height - bottom, x2: width, y2: height - bottom }),
  svg("text", { class: "axis", x: left - 6, y: top + 10, "text-anchor": "end" }, peak),
  svg("text", { class: "axis", x: left - 6, y: height - bottom, "text-anchor": "end" }, 0),
  bars, labels);
}

function legend() {
  return h("ul", { class: "legend" }, OUTCOMES.map(([key, word]) => h("li", {}, h("span", { class: `swatch bar-${key}` }), `${key} (${word})`)));
}

/** The slots as a table: the chart's numbers for whoever prefers (or needs) text. */
function slotTable(overview, door) {
  const rows = overview.slots.map((slot) => ({ slot, sums: slotSums(slot, door) }));
  return table(rows, [
    [overview.slotSeconds === 3600 ? "Hour (UTC)" : "Day (UTC)", ({ slot }) => time(slot.start)],
    ["Succeeded", ({ sums }) => sums.success], ["Refused", ({ sums }) => sums.rejected], ["Errors", ({ sums }) => sums.error],
    ["By reason", ({ sums }) => [...sums.reasons].map(([reason, count]) => `${reason} ${count}`).join(", ") || "—"],
  ], { id: "overview-table" });
}

const age = (seconds) => (seconds === undefined ? "—" : seconds < 120 ? `${seconds} s` : seconds < 7200
  ? `${Math.round(seconds / 60)} min` : seconds < 172800 ? `${Math.round(seconds / 3600)} h` : `${Math.round(seconds / 86400)} days`);

function facts(pairs, attrs = {}) {
  return h("dl", { class: "facts", ...attrs }, pairs.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
}

function appleHealth(apple) {
  if (!apple.configured) return h("p", { id: "apple-health", class: "empty" }, "Sign in with Apple is not configured for this realm.");
  const keys = apple.keys, web = apple.webFlow, notes = apple.notifications, tokens = apple.tokens;
  const exchange = web.lastExchange
    ? (web.lastExchange.ok ? `ok at ${time(web.lastExchange.at)}` : `${web.lastExchange.error} at ${time(web.lastExchange.at)}`)
    : "none since this node started";
  const byType = Object.entries(notes.byType ?? {}).map(([type, count]) => `${type} ${count}`).join(", ") || "none";
  return h("div", { id: "apple-health" }, facts([
    ["Provider", apple.enabled ? "enabled" : "disabled"],
    ["Apple's keys fetched", keys.lastSuccessAt ? `${time(keys.lastSuccessAt)} (${age(keys.ageSeconds)} ago)${keys.stale ? ", stale" : ""}` : "not yet (on the first sign-in)"],
    ["Key ids held", keys.keyIds.length ? keys.keyIds.map((kid) => h("code", {}, kid, " ")) : "none"],
    ["Last key fetch error", keys.lastFailure ? `${keys.lastFailure.outcome} at ${time(keys.lastFailure.at)}` : "none"],
    ["Web flow", `Team ID ${web.teamIdSet ? "set" : "missing"}, Key ID ${web.keyIdSet ? "set" : "missing"}, private key ${web.privateKeyStored ? "stored" : "missing"}`],
    ["Last code exchange", exchange],
    ["Apple's last refusal", web.lastRefusal ? `${web.lastRefusal.error} at ${time(web.lastRefusal.at)}` : "none"],
    ["Last notification", notes.last ? `${notes.last.type} at ${time(notes.last.receivedAt)}` : "none"],
    ["Notifications in the window", byType],
    ["Apple refresh tokens", tokens.refreshTokens],
    ["Revocations", `${tokens.pendingRevocations} pending, ${tokens.failedRevocations} given up`],
  ], { id: "apple-facts" }), h("p", { class: "meta" }, "Private keys and tokens are never shown, only whether they are there."));
}

export async function page(container, [realmId], query) {
  const span = query.get("window") === "7d" ? "7d" : "24h";
  const overview = await api("GET", `/realms/${seg(realmId)}/overview`, { query: { window: span } });
  const doors = ["", ...overview.byProviderDoor.map((entry) => `${entry.provider} · ${entry.door}`)];
  const doorSelect = select("", doors, { id: "overview-door", "aria-label": "Provider and door" });
  const readout = h("p", { id: "chart-readout", class: "readout", "aria-live": "polite" }, "Point at or focus a bar to read its numbers.");
  const chartHolder = h("div", { class: "chart" });
  const tableHolder = h("div", {});
  const draw = () => {
    chartHolder.replaceChildren(chart(overview, doorSelect.value, readout));
    tableHolder.replaceChildren(slotTable(overview, doorSelect.value));
  };
  doorSelect.addEventListener("change", draw);
  draw();
  const base = `#/realms/${seg(realmId)}/overview`;
  const windows = h("nav", { class: "windows", "aria-label": "Window" },
    h("a", { href: base, class: span === "24h" ? "current" : null }, "Last 24 hours"),
    h("a", { href: `${base}?window=7d`, class: span === "7d" ? "current" : null }, "Last 7 days"));
  const totals = overview.totals;
  const warnings = overview.warnings.length
    ? h("ul", { id: "overview-warnings", class: "warnings" }, overview.warnings.map((warning) =>
      h("li", { class: "warning", "data-kind": warning.kind, role: "alert" }, warning.message)))
    : h("p", { id: "overview-warnings", class: "meta" }, "No warnings.");
  container.append(
    h("h1", {}, `Overview — ${realmId}`), warnings, windows,
    facts([["Sign-in attempts", totals.attempts], ["Succeeded", `${totals.success} (${totals.newAccounts} new account${totals.newAccounts === 1 ? "" : "s"})`],
      ["Refused", totals.rejected], ["Errors", totals.error]], { id: "overview-totals" }),
    h("h2", {}, "Sign-ins"), h("div", { class: "filters" }, h("label", { for: "overview-door" }, "Provider and door "), doorSelect),
    legend(), chartHolder, readout,
    h("details", { id: "overview-numbers" }, h("summary", {}, "The chart's numbers as a table"), tableHolder),
    h("h2", {}, "By reason"),
    table(overview.byReason, [["Outcome", (entry) => entry.outcome], ["Reason", (entry) => h("code", {}, entry.reason)],
      ["Count", (entry) => entry.count]], { id: "overview-reasons" }),
    h("h2", {}, "By provider and door"),
    table(overview.byProviderDoor, [["Provider", (entry) => entry.provider], ["Door", (entry) => entry.door],
      ["Attempts", (entry) => entry.attempts], ["Succeeded", (entry) => entry.success], ["Refused", (entry) => entry.rejected],
      ["Errors", (entry) => entry.error]], { id: "overview-doors" }),
    h("h2", {}, "Sign in with Apple"), appleHealth(overview.apple),
    h("p", { class: "meta" }, `Counts reach this page within a few seconds. Generated ${time(overview.generatedAt)}.`));
}
