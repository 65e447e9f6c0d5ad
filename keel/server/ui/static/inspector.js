// Keel Inspector: a conversation's event log as a timeline grouped by turn, the state at any
// event (stack and memory), the turn's stage timings, followed live over the admin stream.
import { compact, describeError, el, fetchJSON, getKey, seg, setupKeyForm, showAlert, streamSSE } from "./api.js";

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
};

// Kinds hidden unless "Show bookkeeping events" is on: Rasa compatibility copies, stack and
// state bookkeeping, and stage timings (shown as the waterfall instead).
const MINOR = new Set([
  "flow_started", "flow_completed", "flow_cancelled", "flow_interrupted", "flow_resumed",
  "mcp_tool_executed", "slot_set", "stack_changed", "conversation_state_changed",
  "bot_turn_ended", "stage_timed",
]);

let current = null; // {owner, id}
let events = new Map(); // seq -> encoded event
let groups = []; // {turnId, stop, stages, list, label, number}
let groupOf = new Map(); // seq -> group
let selected = null; // seq
let follower = null; // AbortController of the live stream
let stateToken = 0;

const short = (text, n = 90) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
const ms = (value) => `${Number(value).toFixed(value < 10 ? 2 : 1)} ms`;
const base = () => `/v1/admin/conversations/${seg(current.owner ?? "~")}/${seg(current.id)}`;

/** [category, label, summary] for one encoded event. */
function describe(ev) {
  const t = ev.type;
  switch (t) {
    case "user_message":
      return ["user", "User message", ev.button_title ? `${ev.button_title} (button: ${ev.text})` : ev.text];
    case "bot_message":
      return ["bot", "Bot message", ev.text + (ev.buttons?.length ? ` [${ev.buttons.map((b) => b.title).join(" | ")}]` : "")];
    case "routing_decided":
      return ["routing", "Routing decision", `${ev.source} → ${ev.skill_id ?? "none"}${ev.tier ? ` (tier ${ev.tier})` : ""}${ev.candidates?.length ? `; candidates ${ev.candidates.join(", ")}` : ""}${ev.reason ? `; ${ev.reason}` : ""}`];
    case "tool_executed":
    case "mcp_tool_executed":
      return [ev.is_error ? "error" : "tool", "Tool call", `${ev.tool_name} ${compact(ev.arguments)} → ${ev.is_error ? `error ${ev.error_code ?? ""} ${ev.error_message ?? ""}` : short(String(ev.result ?? ""), 120)}`];
    case "tool_call_refused":
      return ["error", "Tool call refused", `${ev.tool_name} ${ev.arguments}: ${ev.code} ${ev.message}`];
    case "memory_set":
      return ["memory", "Memory write", `${ev.key} = ${short(compact(ev.value), 120)}`];
    case "slot_set":
      return ["memory", "Slot set", `${ev.name} = ${short(compact(ev.value), 120)}`];
    case "memory_cleared":
      return ["memory", "Memory cleared", ev.key];
    case "pause_point_created":
      return ["pause", "Pause", `${ev.tool_name} ${compact(ev.tool_args)} waits for confirmation`];
    case "pause_point_resolved":
      return ["pause", "Pause resolved", ev.approved ? "approved" : "denied"];
    case "turn_started":
      return ["turn", "Turn started", ev.turn_id];
    case "turn_ended":
      return ["turn", "Stop reason", ev.stop_reason];
    case "model_called":
      return ["model", "Model call", `${ev.model} (${ev.tier}) · tokens ${ev.input_tokens} in / ${ev.output_tokens} out · ${ms(ev.latency_ms)}${ev.cost != null ? ` · cost ${ev.cost}` : ""}`];
    case "stage_timed":
      return ["stage", "Stage timed", `${ev.stage} ${ms(ev.duration_ms)}`];
    case "plan_cache_decided":
      return ["plan", "Plan cache decision", `${ev.layer} ${ev.hit ? "hit" : "miss"} (${ev.reason})${ev.intent ? ` intent ${ev.intent}` : ""}${ev.entry_id ? ` entry ${ev.entry_id}` : ""}`];
    case "plan_executed":
      return [ev.status === "ok" ? "plan" : "error", "Plan run", `${ev.source} ${ev.status}, ${ev.steps_run} steps${ev.failed_step ? `, failed at ${ev.failed_step}` : ""}${ev.error_code ? ` (${ev.error_code})` : ""}`];
    case "history_compressed":
      return ["model", "History compressed", `${ev.tokens_before} → ${ev.tokens_after} tokens, ${ev.dropped_messages} dropped`];
    case "step_advanced":
      return ["skill", "Step", `${ev.skill_id}/${ev.block_id} → ${ev.step_id}`];
    case "stack_changed":
      return ["skill", "Stack", ev.frames.map((f) => f.block_id ? `${f.skill_id}/${f.block_id}` : f.skill_id).join(" › ") || "empty"];
    case "conversation_state_changed":
      return ["turn", "State", ev.state];
    case "session_started":
      return ["turn", "Session started", ""];
    default:
      break;
  }
  if (t.startsWith("skill_")) return ["skill", `Skill ${t.slice(6)}`, ev.skill_id + (ev.step_id ? ` at ${ev.step_id}` : "")];
  if (t.startsWith("ordered_block_")) return ["skill", `Block ${t.slice(14)}`, `${ev.skill_id}/${ev.block_id}${ev.step_id ? ` at ${ev.step_id}` : ""}`];
  if (t.startsWith("flow_")) return ["skill", `Flow ${t.slice(5)}`, `${ev.flow_id} at ${ev.step_id}`];
  return ["other", t.replaceAll("_", " "), ""];
}

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

function optionFor(seq, ev) {
  const [category, label, summary] = describe(ev);
  const option = el(
    "div",
    { role: "option", id: `event-${seq}`, tabindex: "-1", "aria-selected": "false", className: `row row-${category}${MINOR.has(ev.type) ? " row-minor" : ""}`, dataset: { seq } },
    el("span", { className: "row-seq", text: `#${seq}` }),
    " ",
    el("span", { className: "row-kind", text: label }),
    " ",
    el("span", { className: "row-summary", text: summary }),
  );
  return option;
}

function addEvent(seq, ev) {
  if (events.has(seq)) return;
  events.set(seq, ev);
  let group = groups.at(-1);
  if (ev.type === "turn_started" || !group) group = newGroup(ev.type === "turn_started" ? ev.turn_id : null);
  groupOf.set(seq, group);
  if (ev.type === "stage_timed") group.stages.push(ev);
  if (ev.type === "turn_ended") {
    group.stop = ev.stop_reason;
    labelGroup(group);
  }
  if (ui.minor.checked || !MINOR.has(ev.type)) group.list.append(optionFor(seq, ev));
  if (selected !== null && groupOf.get(selected) === group && ev.type === "stage_timed") renderWaterfall(group);
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
  renderDetails(selected, events.get(selected));
  renderWaterfall(groupOf.get(selected));
  loadState(selected);
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

// ---- details, state, waterfall -----------------------------------------------------------

function field(dl, name, value) {
  dl.append(el("dt", { text: name }), el("dd", {}, value));
}

function renderDetails(seq, ev) {
  const [, label, summary] = describe(ev);
  const dl = el("dl", { className: "facts" });
  field(dl, "Event", `#${seq} ${ev.type}`);
  field(dl, "Kind", label);
  if (summary) field(dl, "Summary", summary);
  if (ev.timestamp) field(dl, "Time", new Date(ev.timestamp * 1000).toISOString());
  const parts = [dl];
  if (ev.type === "model_called") parts.push(...modelParts(ev));
  parts.push(el("details", {}, el("summary", { text: "Raw event" }), el("pre", { className: "json", text: JSON.stringify(ev, null, 2) })));
  ui.details.replaceChildren(...parts);
}

function modelParts(ev) {
  const dl = el("dl", { className: "facts" });
  field(dl, "Model", `${ev.model} (tier ${ev.tier})`);
  field(dl, "Tokens", `${ev.input_tokens} in, ${ev.output_tokens} out`);
  field(dl, "Cost", ev.cost == null ? "not reported" : String(ev.cost));
  field(dl, "Latency", ms(ev.latency_ms));
  const parts = [el("h3", { text: "Model call" }), dl];
  const request = ev.metadata?.request;
  if (request) {
    const messages = Array.isArray(request) ? request : request.messages || [];
    const tools = request.tools || request.tool_names || [];
    const names = tools.map((t) => (typeof t === "string" ? t : t.name || compact(t))).join(", ");
    parts.push(
      el("p", {}, `Offered tools: ${names || "none"}`),
      el("details", { open: true }, el("summary", { text: `Prompt (${messages.length} messages)` }), el("ol", { className: "prompt" }, messages.map(promptMessage))),
    );
  } else {
    parts.push(el("p", { className: "muted", text: "The prompt was not recorded for this call." }));
  }
  const reply = ev.metadata?.reply;
  if (reply) parts.push(el("h4", { text: "Reply" }), el("ul", { className: "prompt" }, promptMessage(reply)));
  return parts;
}

function promptMessage(message) {
  const content = typeof message.content === "string" ? message.content : message.content == null ? "" : compact(message.content);
  const item = el("li", { className: `prompt-${message.role}` }, el("strong", { text: `${message.role}: ` }), el("span", { className: "prompt-text", text: content }));
  for (const call of message.tool_calls || []) {
    const fn = call.function || call;
    item.append(el("div", { className: "prompt-call", text: `→ ${fn.name}(${typeof fn.arguments === "string" ? fn.arguments : compact(fn.arguments)})` }));
  }
  return item;
}

async function loadState(seq) {
  const token = ++stateToken;
  ui.state.replaceChildren(el("p", { className: "muted", text: `Loading the state at #${seq}…` }));
  try {
    const state = await fetchJSON(`${base()}/state?seq=${seq}`);
    if (token === stateToken) renderState(state);
  } catch (error) {
    if (token === stateToken) ui.state.replaceChildren(el("p", { className: "error", text: describeError(error) }));
  }
}

function renderState(state) {
  const dl = el("dl", { className: "facts" });
  field(dl, "At event", `#${state.seq}`);
  field(dl, "Status", state.status ?? state.state ?? "");
  field(dl, "Active skill", state.active_skill ?? "none");
  const pending = state.pending_confirmation;
  field(dl, "Pending confirmation", pending ? `${pending.tool} ${compact(pending.arguments)}` : "none");
  const stack = el("ol", { className: "stack", "aria-label": "Stack" });
  for (const f of state.stack || []) {
    stack.append(el("li", { text: f.type === "ordered_block" ? `${f.skill_id} / ${f.block_id} at ${f.step_id ?? "start"}` : `${f.skill_id} (skill)` }));
  }
  const memory = el("table", { className: "memory" }, el("caption", { text: "Memory" }), el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Key" }), el("th", { scope: "col", text: "Value" }))));
  const body = el("tbody");
  for (const [key, value] of Object.entries(state.memory || {})) {
    body.append(el("tr", {}, el("th", { scope: "row", text: key }), el("td", {}, el("code", { text: short(compact(value), 400) }))));
  }
  memory.append(body);
  const parts = [dl, el("h4", { text: "Stack" }), state.stack?.length ? stack : el("p", { className: "muted", text: "Empty stack." }), memory];
  if (!Object.keys(state.memory || {}).length) parts.push(el("p", { className: "muted", text: "Memory is empty." }));
  ui.state.replaceChildren(...parts);
}

function renderWaterfall(group) {
  if (!group || !group.stages.length) {
    ui.waterfall.replaceChildren(el("p", { className: "muted", text: "No stage timings recorded in this turn." }));
    return;
  }
  const total = group.stages.reduce((sum, s) => sum + s.duration_ms, 0) || 1;
  const list = el("ol", { className: "waterfall", "aria-label": `Stage timing, turn ${group.number}` });
  let offset = 0;
  for (const stage of group.stages) {
    const bar = el("span", { className: "bar" });
    bar.style.marginLeft = `${(offset / total) * 100}%`;
    bar.style.width = `${Math.max((stage.duration_ms / total) * 100, 0.5)}%`;
    list.append(el("li", { className: "stage" }, el("span", { className: "stage-name", text: stage.stage }), el("span", { className: "bar-track" }, bar), el("span", { className: "stage-ms", text: ms(stage.duration_ms) })));
    offset += stage.duration_ms;
  }
  ui.waterfall.replaceChildren(el("p", { text: `Turn ${group.number}: ${ms(total)} over ${group.stages.length} stages.` }), list);
}

// ---- conversations and loading -----------------------------------------------------------

async function loadConversations() {
  if (!getKey()) return;
  try {
    const reply = await fetchJSON("/v1/admin/conversations?limit=500");
    ui.list.replaceChildren();
    for (const c of reply.conversations) {
      const name = `${c.owner ?? "(no key)"} / ${c.conversation_id}`;
      const button = el("button", { type: "button", className: "conversation", "aria-pressed": String(isCurrent(c)), onclick: () => openConversation(c.owner, c.conversation_id) }, el("span", { text: name }), el("span", { className: "muted", text: ` · ${c.last_seq} events` }));
      ui.list.append(el("li", {}, button));
    }
    ui.empty.hidden = reply.conversations.length > 0;
  } catch (error) {
    showAlert(describeError(error));
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
      if (frame.event === "logged" && frame.data) addEvent(Number(frame.data.seq), frame.data.event);
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
