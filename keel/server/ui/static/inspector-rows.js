// Inspector timeline rows: what one logged event says ([category, label, summary]), and the
// listbox option that shows it. Pure rendering: no state, no requests.
import { compact, el } from "./api.js";

// Kinds hidden unless "Show bookkeeping events" is on: Rasa compatibility copies, stack and
// state bookkeeping, and stage timings (shown as the waterfall instead).
export const MINOR = new Set([
  "flow_started", "flow_completed", "flow_cancelled", "flow_interrupted", "flow_resumed",
  "mcp_tool_executed", "slot_set", "stack_changed", "conversation_state_changed",
  "bot_turn_ended", "stage_timed", "stages_timed",
]);

export const short = (text, n = 90) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
export const ms = (value) => `${Number(value).toFixed(value < 10 ? 2 : 1)} ms`;

/** [category, label, summary] for one encoded event. */
export function describe(ev) {
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
      return [ev.is_error ? "error" : "tool", "Tool call", `${ev.tool_name} ${compact(ev.arguments)} → ${ev.is_error ? `error ${ev.error_code ?? ""} ${ev.error_message ?? ""}` : short(String(ev.result ?? ""), 120)}${planStep(ev)}`];
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
    case "stages_timed":
      return ["stage", "Stages timed", Object.entries(ev.durations_ms).map(([stage, took]) => `${stage} ${ms(took)}`).join(" · ")];
    case "plan_cache_decided":
      return ["plan", "Plan cache decision", planDecision(ev)];
    case "plan_executed":
      return [ev.status === "ok" ? "plan" : "error", "Plan run", planRun(ev)];
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

/** Plan cache layers that look a plan up (and so hit or miss); `record` and `feedback` do not. */
export const LOOKUP_LAYERS = new Set(["l0", "l1", "l3"]);

/** "l0 hit · entry … · intent …", "l1 miss (signature) · …", "record: recorded · …". */
export function planDecision(ev) {
  let outcome = `${ev.layer}: ${ev.reason}`;
  if (LOOKUP_LAYERS.has(ev.layer)) {
    outcome = `${ev.layer} ${ev.hit ? "hit" : "miss"}${ev.reason && ev.reason !== "hit" ? ` (${ev.reason})` : ""}`;
  }
  return [outcome, ev.entry_id && `entry ${ev.entry_id}`, ev.intent && `intent ${ev.intent}`].filter(Boolean).join(" · ");
}

/** "source l0 · status ok · 1 step run · entry …" (a failure says at which step and why). */
export function planRun(ev) {
  const steps = ev.steps_run ?? 0;
  let status = `status ${ev.status}`;
  if (ev.failed_step != null) status += ` at step ${ev.failed_step}`;
  if (ev.error_code) status += ` (${ev.error_code})`;
  const parts = [`source ${ev.source}`, status, `${steps} step${steps === 1 ? "" : "s"} run`];
  if (ev.committed?.length) parts.push(`committed step${ev.committed.length === 1 ? "" : "s"} ${ev.committed.join(", ")}`);
  if (ev.entry_id) parts.push(`entry ${ev.entry_id}`);
  return parts.join(" · ");
}

/** " · plan l0 step 1" for a tool run by a plan (`metadata.plan`), else "". */
const planStep = (ev) => (ev.metadata?.plan ? ` · plan ${ev.metadata.plan} step ${ev.metadata.plan_step ?? "?"}` : "");

/** The timeline row (a listbox option) of the event `ev` logged at `seq`. */
export function optionFor(seq, ev) {
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
