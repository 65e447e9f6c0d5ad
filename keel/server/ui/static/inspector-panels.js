// Inspector side panels: the selected event's details (a model call's prompt and reply), the
// state at that event (stack and memory), and the turn's stage-timing waterfall. Each render
// function fills the element it is given; none keeps state or makes requests.
import { compact, el } from "./api.js";
import { LOOKUP_LAYERS, describe, ms, short } from "./inspector-rows.js";

function field(dl, name, value) {
  dl.append(el("dt", { text: name }), el("dd", {}, value));
}

/** Fill `target` with the facts of the event `ev` logged at `seq` (and its raw JSON). */
export function renderDetails(target, seq, ev) {
  const [, label, summary] = describe(ev);
  const dl = el("dl", { className: "facts" });
  field(dl, "Event", `#${seq} ${ev.type}`);
  field(dl, "Kind", label);
  if (summary) field(dl, "Summary", summary);
  if (ev.timestamp) field(dl, "Time", new Date(ev.timestamp * 1000).toISOString());
  const parts = [dl];
  if (ev.type === "model_called") parts.push(...modelParts(ev));
  if (ev.type === "plan_cache_decided") parts.push(...decisionParts(ev));
  if (ev.type === "plan_executed") parts.push(...planParts(ev));
  parts.push(el("details", {}, el("summary", { text: "Raw event" }), el("pre", { className: "json", text: JSON.stringify(ev, null, 2) })));
  target.replaceChildren(...parts);
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

const LAYER_NAMES = {
  l0: "L0, exact entry",
  l1: "L1, intent champion",
  l3: "L3, planner",
  record: "record, after the turn",
  feedback: "feedback",
};

function decisionParts(ev) {
  const dl = el("dl", { className: "facts" });
  field(dl, "Layer", LAYER_NAMES[ev.layer] ?? ev.layer);
  if (LOOKUP_LAYERS.has(ev.layer)) field(dl, "Outcome", ev.hit ? "hit" : "miss");
  field(dl, "Reason", ev.reason);
  field(dl, "Entry", ev.entry_id ?? "none");
  field(dl, "Intent", ev.intent || "unknown");
  return [el("h3", { text: "Plan cache decision" }), dl];
}

function planParts(ev) {
  const dl = el("dl", { className: "facts" });
  field(dl, "Source", LAYER_NAMES[ev.source] ?? ev.source);
  field(dl, "Status", ev.status);
  field(dl, "Steps run", String(ev.steps_run ?? 0));
  if (ev.failed_step != null) field(dl, "Failed step", String(ev.failed_step));
  if (ev.error_code) field(dl, "Error", ev.error_code);
  field(dl, "Committed steps", ev.committed?.length ? ev.committed.join(", ") : "none");
  field(dl, "Entry", ev.entry_id ?? "none");
  field(dl, "Shape", ev.shape_hash);
  const slots = Object.entries(ev.slots || {});
  field(dl, "Slots", slots.length ? slots.map(([name, value]) => `${name} = ${compact(value)}`).join(", ") : "none");
  const parts = [el("h3", { text: "Plan run" }), dl];
  const steps = ev.plan?.steps || [];
  if (steps.length) {
    const list = el("ol", { className: "plan-steps", "aria-label": "Plan steps" });
    for (const step of steps) list.append(el("li", {}, el("code", { text: `${step.id ?? "?"}. ${step.tool}(${compact(step.args ?? {})})` })));
    parts.push(el("h4", { text: `Plan (${steps.length} steps)` }), list);
  }
  if (ev.plan?.final_message) parts.push(el("p", {}, "Final message: ", el("code", { text: ev.plan.final_message })));
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

/** Fill `target` with a state fold (`GET .../state?seq=`): status, stack and memory. */
export function renderState(target, state) {
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
    body.append(el("tr", {}, el("th", { scope: "row", text: key }), el("td", {}, el("code", { text: short(compact(value), 200) }))));
  }
  memory.append(body);
  const parts = [dl, el("h4", { text: "Stack" }), state.stack?.length ? stack : el("p", { className: "muted", text: "Empty stack." }), el("div", { className: "memory-wrap" }, memory)];
  if (!Object.keys(state.memory || {}).length) parts.push(el("p", { className: "muted", text: "Memory is empty." }));
  target.replaceChildren(...parts);
}

/** Fill `target` with the stage-timing bars of a turn group (`{number, stages}`). */
export function renderWaterfall(target, group) {
  if (!group || !group.stages.length) {
    target.replaceChildren(el("p", { className: "muted", text: "No stage timings recorded in this turn." }));
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
  target.replaceChildren(el("p", { text: `Turn ${group.number}: ${ms(total)} over ${group.stages.length} stages.` }), list);
}
