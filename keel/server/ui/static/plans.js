// Keel plan console: plan cache counts and entries, delete one entry, flush a layer.
import { announce, describeError, el, fetchJSON, getKey, seg, setupKeyForm, showAlert, showKeyPrompt } from "./api.js";

const $ = (id) => document.getElementById(id);
const dialog = $("flush-dialog");
const LAYER_TEXT = {
  l0: "Flush L0: delete every exact (L0) entry.",
  l1: "Flush L1: delete every L1 entry, and every observation and anti-entry.",
  all: "Flush all: delete every entry of both layers, every observation and anti-entry.",
};
const LAYER_NAME = { l0: "L0", l1: "L1", all: "all" };

let flushOpener = null;

const when = (ts) => (ts ? new Date(ts * 1000).toLocaleString() : "never");
const short = (text, n = 80) => (text && text.length > n ? `${text.slice(0, n - 1)}…` : text || "");

function table(caption, headers, rows, empty) {
  if (!rows.length) return el("p", { className: "muted", text: empty });
  const head = el("tr", {}, headers.map((h) => el("th", { scope: "col", text: h })));
  const body = el("tbody", {}, rows);
  return el("table", { className: "data" }, el("caption", { className: "visually-hidden", text: caption }), el("thead", {}, head), body);
}

function entryRows(entries) {
  return entries.map((e) =>
    el(
      "tr",
      { dataset: { id: e.id } },
      el("td", {}, el("code", { text: e.id })),
      el("td", { text: e.scope }),
      el("td", {}, el("code", { text: e.intent_sig }), e.slot_sig ? el("div", { className: "muted", text: e.slot_sig }) : null),
      el("td", { text: short(e.request_text) }),
      el("td", { text: `${e.layer} ${e.status}` }),
      el("td", { text: String(e.n_served) }),
      el("td", { text: `${e.alpha}/${e.beta}` }),
      el("td", { text: when(e.created_at) }),
      el("td", { text: when(e.last_served_at) }),
      el("td", {}, el("button", { type: "button", className: "danger small", "aria-label": `Delete entry ${e.id}`, text: "Delete", onclick: (ev) => deleteEntry(e.id, ev.currentTarget) })),
    ),
  );
}

const ENTRY_HEADERS = ["Id", "Scope", "Intent", "Request", "Layer and status", "Served", "α/β", "Created", "Last served", "Actions"];

function showEntries(id, caption, entries) {
  $(id).replaceChildren(table(caption, ENTRY_HEADERS, entryRows(entries), `No ${caption.replace(/^[A-Z][a-z]/, (w) => w.toLowerCase())}.`));
}

function showObservations(list) {
  const rows = list.map((o) =>
    el(
      "tr",
      {},
      el("td", {}, el("code", { text: o.turn_id })),
      el("td", { text: o.scope }),
      el("td", {}, el("code", { text: o.intent_sig })),
      el("td", {}, el("code", { text: o.shape_hash })),
      el("td", { text: o.outcome }),
      el("td", { text: `${o.signal} (${o.signal_weight})` }),
      el("td", { text: o.template_id || "" }),
      el("td", { text: when(o.ts) }),
    ),
  );
  const headers = ["Turn", "Scope", "Intent", "Shape", "Outcome", "Signal", "Entry", "Time"];
  $("table-observations").replaceChildren(table("Observations", headers, rows, "No observations."));
}

function showAnti(list) {
  const rows = list.map((a) =>
    el(
      "tr",
      {},
      el("td", { text: a.scope }),
      el("td", {}, el("code", { text: a.intent_sig })),
      el("td", {}, el("code", { text: a.shape_hash })),
      el("td", { text: String(a.weight) }),
      el("td", { text: a.reason }),
      el("td", { text: when(a.expires_at) }),
      el("td", { text: a.active ? "yes" : "expired" }),
    ),
  );
  const headers = ["Scope", "Intent", "Shape", "Weight", "Reason", "Expires", "Active"];
  $("table-anti").replaceChildren(table("Anti-entries", headers, rows, "No anti-entries."));
}

function showCounts(counts) {
  for (const [name, value] of Object.entries(counts)) {
    const cell = $(`count-${name}`);
    if (cell) cell.textContent = String(value);
  }
}

let loadToken = 0; // only the latest load shows (a key saved mid-load starts another)

async function load() {
  if (!getKey()) return;
  const token = ++loadToken;
  try {
    const q = (query) => fetchJSON(`/v1/admin/plans?limit=1000&${query}`);
    const [l0, active, shadow, demoted, stale, observations, anti] = await Promise.all([
      q("layer=l0"),
      q("layer=l1&status=active"),
      q("layer=l1&status=shadow"),
      q("status=demoted"),
      q("status=stale"),
      fetchJSON("/v1/admin/plans/observations?limit=200"),
      fetchJSON("/v1/admin/plans/anti"),
    ]);
    if (token !== loadToken) return;
    showCounts(l0.counts);
    showEntries("table-l0", "L0 entries", l0.entries);
    showEntries("table-active", "L1 champions", active.entries);
    showEntries("table-shadow", "L1 shadows", shadow.entries);
    showEntries("table-retired", "Demoted and stale entries", [...demoted.entries, ...stale.entries]);
    showObservations(observations.observations);
    showAnti(anti.anti);
    showAlert("");
    showKeyPrompt("");
  } catch (error) {
    if (token === loadToken && !showKeyPrompt(error)) showAlert(describeError(error));
  }
}

async function deleteEntry(id, button) {
  const wrap = button.closest(".table-wrap");
  const buttons = [...wrap.querySelectorAll("button")];
  const index = buttons.indexOf(button);
  try {
    await fetchJSON(`/v1/admin/plans/${seg(id)}`, { method: "DELETE" });
    announce(`Deleted entry ${id}.`);
  } catch (error) {
    showAlert(describeError(error));
  }
  await load();
  const left = [...wrap.querySelectorAll("button")];
  if (left.length) left[Math.min(index, left.length - 1)].focus();
  else wrap.closest("section").querySelector("h2").focus();
}

function openFlush(layer, opener) {
  flushOpener = opener;
  dialog.dataset.layer = layer;
  $("flush-title").textContent = `Flush ${LAYER_NAME[layer]}?`;
  $("flush-text").textContent = `${LAYER_TEXT[layer]} This cannot be undone.`;
  dialog.returnValue = "";
  dialog.showModal();
}

async function onDialogClose() {
  const layer = dialog.dataset.layer;
  const confirmed = dialog.returnValue === "confirm";
  const opener = flushOpener;
  flushOpener = null;
  if (opener) opener.focus();
  if (!confirmed) {
    announce(`Flush ${LAYER_NAME[layer]} cancelled.`);
    return;
  }
  try {
    const reply = await fetchJSON("/v1/admin/plans/flush", { method: "POST", body: { layer } });
    announce(`Flushed ${LAYER_NAME[layer]}: ${reply.deleted} ${reply.deleted === 1 ? "entry" : "entries"} deleted.`);
  } catch (error) {
    showAlert(describeError(error));
  }
  await load();
}

function start() {
  $("refresh").addEventListener("click", async () => {
    await load();
    announce("Refreshed.");
  });
  for (const button of document.querySelectorAll("[data-flush]")) {
    button.addEventListener("click", () => openFlush(button.dataset.flush, button));
  }
  dialog.addEventListener("close", onDialogClose);
  setupKeyForm(load);
}

start();
