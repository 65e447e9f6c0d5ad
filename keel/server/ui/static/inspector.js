// Keel Inspector: a conversation's event log as a timeline grouped by turn, the state at any
// event (stack and memory), the turn's stage timings, the agent's graph with the step the
// conversation was at, followed live over the admin stream.
import { describeError, el, fetchJSON, getKey, seg, setupKeyForm, showAlert, showKeyPrompt, streamSSE } from "./api.js";
import { renderGraph } from "./inspector-graph.js";
import { renderDetails, renderState, renderWaterfall } from "./inspector-panels.js";
import { MINOR, optionFor } from "./inspector-rows.js";

const $ = (id) => document.getElementById(id);
const ui = {
  list: $("conversations"),
  empty: $("conversations-empty"),
  refresh: $("refresh-conversations"),
  heading: $("timeline-heading"),
  timeline: $("timeline"),
  minor: $("show-minor"),
  follow: $("follow-live"),
  followStatus: $("follow-status"),
  details: $("event-details"),
  state: $("state-view"),
  waterfall: $("waterfall"),
  graph: $("graph"),
  graphStatus: $("graph-status"),
  graphText: $("graph-mermaid"),
};

let current = null; // {owner, id}
let events = new Map(); // seq -> encoded event
let groups = []; // {turnId, stop, stages, list, label, number}
let groupOf = new Map(); // seq -> group
let selected = null; // seq
let follower = null; // AbortController of the live stream
let stateToken = 0;
let graphToken = 0;

const base = () => `/v1/admin/conversations/${seg(current.owner ?? "~")}/${seg(current.id)}`;

// ---- timeline ----------------------------------------------------------------------------

function newGroup(turnId) {
  const number = groups.length + 1;
  const labelId = `turn-label-${number}`;
  const label = el("div", { role: "presentation", id: labelId, className: "turn-label" });
  const list = el("div", { role: "group", className: "turn", "aria-labelledby": labelId }, label);
  const group = { turnId, stop: null, stages: [], list, label, number };
  labelGroup(group);
  ui.timeline.append(list);
  groups.push(group);
  return group;
}

function labelGroup(group) {
  const what = group.turnId === null ? "Before the first turn" : `Turn ${group.number}`;
  group.label.textContent = group.stop ? `${what} · ${group.stop}` : what;
}

function addEvent(seq, ev) {
  if (events.has(seq)) return;
  events.set(seq, ev);
  let group = groups.at(-1);
  if (ev.type === "turn_started" || !group) group = newGroup(ev.type === "turn_started" ? ev.turn_id : null);
  groupOf.set(seq, group);
  if (ev.type === "stage_timed") group.stages.push(ev);
  // Since event schema v8 a turn's stages come in one event: one bar per stage, as before.
  if (ev.type === "stages_timed") for (const [stage, took] of Object.entries(ev.durations_ms)) group.stages.push({ stage, duration_ms: took });
  if (ev.type === "turn_ended") {
    group.stop = ev.stop_reason;
    labelGroup(group);
  }
  if (ui.minor.checked || !MINOR.has(ev.type)) group.list.append(optionFor(seq, ev));
  if (selected !== null && groupOf.get(selected) === group && ev.type.startsWith("stage")) renderWaterfall(ui.waterfall, group);
  ensureTabStop();
}

function rebuild() {
  const kept = [...events.entries()];
  ui.timeline.replaceChildren();
  events = new Map();
  groups = [];
  groupOf = new Map();
  for (const [seq, ev] of kept) addEvent(seq, ev);
  const option = selected !== null ? $(`event-${selected}`) : null;
  if (option) markSelected(option);
  ensureTabStop();
}

const options = () => [...ui.timeline.querySelectorAll('[role="option"]')];

function ensureTabStop() {
  const all = options();
  if (!all.length || all.some((o) => o.tabIndex === 0)) return;
  all[0].tabIndex = 0;
}

function markSelected(option) {
  for (const other of ui.timeline.querySelectorAll('[aria-selected="true"], [tabindex="0"]')) {
    other.setAttribute("aria-selected", "false");
    other.tabIndex = -1;
  }
  option.setAttribute("aria-selected", "true");
  option.tabIndex = 0;
}

function select(option, focus = true) {
  markSelected(option);
  if (focus) option.focus();
  option.scrollIntoView({ block: "nearest" });
  selected = Number(option.dataset.seq);
  renderDetails(ui.details, selected, events.get(selected));
  renderWaterfall(ui.waterfall, groupOf.get(selected));
  loadState(selected);
  loadGraph(selected);
}

function onTimelineKey(event) {
  const all = options();
  if (!all.length) return;
  const at = all.indexOf(document.activeElement);
  const moves = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1, PageDown: at + 10, PageUp: at - 10 };
  if (event.key in moves) {
    event.preventDefault();
    select(all[Math.max(0, Math.min(all.length - 1, at === -1 ? 0 : moves[event.key]))]);
  } else if ((event.key === "Enter" || event.key === " ") && at !== -1) {
    event.preventDefault();
    select(all[at]);
  }
}

// ---- the state at the selected event ------------------------------------------------------

async function loadState(seq) {
  const token = ++stateToken;
  ui.state.replaceChildren(el("p", { className: "muted", text: `Loading the state at #${seq}…` }));
  try {
    const state = await fetchJSON(`${base()}/state?seq=${seq}`);
    if (token === stateToken) renderState(ui.state, state);
  } catch (error) {
    if (token === stateToken) ui.state.replaceChildren(el("p", { className: "error", text: describeError(error) }));
  }
}

// ---- the agent's graph at the selected event (or the log's end) ---------------------------

async function loadGraph(seq = null) {
  if (!current) return;
  const token = ++graphToken;
  try {
    const reply = await fetchJSON(`${base()}/graph${seq === null ? "" : `?seq=${seq}`}`);
    if (token !== graphToken) return;
    const { current: node } = renderGraph(ui.graph, reply.mermaid);
    ui.graphText.textContent = reply.mermaid;
    const step = reply.current;
    ui.graphStatus.textContent = step ? `Current step: ${step.skill_id} / ${step.block_id} / ${step.step_id} (after #${reply.seq})` : `No ordered block is running after #${reply.seq}.`;
    if (node) $(`graph-${node.id}`)?.scrollIntoView({ block: "nearest", inline: "nearest" });
  } catch (error) {
    if (token === graphToken) ui.graph.replaceChildren(el("p", { className: "error", text: describeError(error) }));
  }
}

// ---- conversations and loading -----------------------------------------------------------

let listToken = 0; // only the latest list shows (a key saved mid-load starts another)

async function loadConversations() {
  if (!getKey()) return;
  const token = ++listToken;
  try {
    const reply = await fetchJSON("/v1/admin/conversations?limit=500");
    if (token !== listToken) return;
    ui.list.replaceChildren();
    for (const c of reply.conversations) {
      const name = `${c.owner ?? "(no key)"} / ${c.conversation_id}`;
      const button = el("button", { type: "button", className: "conversation", "aria-pressed": String(isCurrent(c)), onclick: () => openConversation(c.owner, c.conversation_id) }, el("span", { text: name }), el("span", { className: "muted", text: ` · ${c.last_seq} events` }));
      ui.list.append(el("li", {}, button));
    }
    ui.empty.hidden = reply.conversations.length > 0;
    showKeyPrompt("");
  } catch (error) {
    if (token === listToken && !showKeyPrompt(error)) showAlert(describeError(error));
  }
}

const isCurrent = (c) => current !== null && current.owner === c.owner && current.id === c.conversation_id;

async function openConversation(owner, id) {
  stopFollowing();
  current = { owner, id };
  for (const button of ui.list.querySelectorAll("button")) button.setAttribute("aria-pressed", "false");
  for (const button of ui.list.querySelectorAll("button")) {
    if (button.firstChild.textContent === `${owner ?? "(no key)"} / ${id}`) button.setAttribute("aria-pressed", "true");
  }
  const params = new URLSearchParams({ conversation: id });
  if (owner !== null && owner !== undefined) params.set("owner", owner);
  history.replaceState(null, "", `${window.location.pathname}?${params}`);
  ui.heading.textContent = `Timeline of ${owner ?? "(no key)"} / ${id}`;
  events = new Map();
  groups = [];
  groupOf = new Map();
  selected = null;
  ui.timeline.replaceChildren();
  ui.details.replaceChildren(el("p", { className: "muted", text: "No event selected." }));
  showAlert("");
  try {
    let after = 0;
    for (;;) {
      const page = await fetchJSON(`${base()}/events?after=${after}`);
      for (const item of page.events) addEvent(item.seq, item.event);
      if (!page.events.length || page.events.at(-1).seq >= page.last_seq) break;
      after = page.events.at(-1).seq;
    }
  } catch (error) {
    showAlert(describeError(error));
    return;
  }
  loadGraph();
  if (ui.follow.checked) follow();
}

function lastSeq() {
  let last = 0;
  for (const seq of events.keys()) last = Math.max(last, seq);
  return last;
}

async function follow() {
  if (!current || follower) return;
  const controller = new AbortController();
  follower = controller;
  ui.followStatus.textContent = "Following live.";
  try {
    await streamSSE(`${base()}/stream?after=${lastSeq()}`, { signal: controller.signal }, (frame) => {
      if (frame.event !== "logged" || !frame.data) return;
      addEvent(Number(frame.data.seq), frame.data.event);
      if (frame.data.event.type === "turn_ended" && selected === null) loadGraph(); // the step now
    });
    if (follower === controller) ui.followStatus.textContent = "The live stream ended.";
  } catch (error) {
    if (follower === controller) ui.followStatus.textContent = `Not following: ${describeError(error)}`;
  } finally {
    if (follower === controller) follower = null;
  }
}

function stopFollowing() {
  if (follower) follower.abort();
  follower = null;
  ui.followStatus.textContent = "";
}

function start() {
  ui.refresh.addEventListener("click", loadConversations);
  ui.timeline.addEventListener("keydown", onTimelineKey);
  ui.timeline.addEventListener("click", (event) => {
    const option = event.target.closest('[role="option"]');
    if (option) select(option);
  });
  ui.minor.addEventListener("change", rebuild);
  ui.follow.addEventListener("change", () => (ui.follow.checked ? follow() : stopFollowing()));
  window.addEventListener("pagehide", stopFollowing);
  setupKeyForm(async () => {
    await loadConversations();
    const params = new URLSearchParams(window.location.search);
    if (params.get("conversation") && !current) openConversation(params.get("owner"), params.get("conversation"));
  });
}

start();
