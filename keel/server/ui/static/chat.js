// Keel web chat: talk to the agent through the chat API, streamed as server-sent events.
import {
  ApiError,
  announce,
  compact,
  describeError,
  el,
  fetchJSON,
  getKey,
  seg,
  setupKeyForm,
  showAlert,
  streamSSE,
} from "./api.js";

const ID_STORAGE = "keel.chat.conversation";
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

const $ = (id) => document.getElementById(id);
const ui = {
  id: $("conversation-id"),
  fresh: $("new-conversation"),
  state: $("conversation-state"),
  log: $("messages"),
  composer: $("composer"),
  input: $("message-input"),
  send: $("send"),
  cancel: $("cancel-turn"),
  approval: $("approval"),
  ask: $("approval-ask"),
  tool: $("approval-tool"),
  args: $("approval-arguments"),
  approve: $("approve"),
  deny: $("deny"),
};

let running = false;
let pause = null; // the pending {pause_id, tool, ask, arguments}
let preview = null; // the bubble showing text_delta previews
let loadedFor = null; // the conversation whose history is shown

function randomId() {
  const bytes = new Uint8Array(5);
  crypto.getRandomValues(bytes);
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const conversationUrl = (suffix = "") => `/v1/conversations/${seg(ui.id.value.trim())}${suffix}`;

function setState(state) {
  ui.state.textContent = state ? `State: ${state}` : "";
}

function scrollDown() {
  ui.log.scrollTop = ui.log.scrollHeight;
}

function addBubble(role, text, extra = {}) {
  const who = role === "user" ? "You" : "Agent";
  const bubble = el(
    "div",
    { className: `message message-${role}`, dataset: extra.seq ? { seq: extra.seq } : undefined },
    el("span", { className: "message-who", text: `${who}: ` }),
    el("span", { className: "message-text", text }),
  );
  if (extra.buttons && extra.buttons.length) {
    const row = el("div", { className: "message-buttons", role: "group", "aria-label": "Suggested replies" });
    for (const button of extra.buttons) {
      row.append(
        el("button", {
          type: "button",
          text: button.title,
          onclick: () => sendText(button.payload, button.title),
        }),
      );
    }
    bubble.append(row);
  }
  ui.log.append(bubble);
  scrollDown();
  return bubble;
}

function addActivity(text, className = "") {
  const line = el("div", { className: `activity ${className}`.trim(), text });
  ui.log.append(line);
  scrollDown();
  return line;
}

function showPreview(text) {
  if (!preview) {
    preview = el("div", { className: "message message-bot preview", "aria-hidden": "true" });
    preview.append(el("span", { className: "message-who", text: "Agent: " }), el("span", { className: "message-text" }));
    ui.log.append(preview);
  }
  preview.lastChild.textContent += text;
  scrollDown();
}

function dropPreview() {
  if (preview) preview.remove();
  preview = null;
}

function showPause(data) {
  pause = data;
  ui.ask.textContent = data.ask || "";
  ui.tool.textContent = data.tool;
  ui.args.textContent = JSON.stringify(data.arguments ?? {}, null, 2);
  ui.approval.hidden = false;
  updateControls();
}

function hidePause() {
  pause = null;
  ui.approval.hidden = true;
}

function updateControls() {
  ui.send.disabled = running;
  ui.cancel.disabled = !running;
  ui.approve.disabled = running || !pause;
  ui.deny.disabled = running || !pause;
  for (const button of ui.log.querySelectorAll(".message-buttons button")) button.disabled = running;
}

const openTools = [];

function onFrame(frame) {
  const data = frame.data || {};
  switch (frame.event) {
    case "text_delta":
      showPreview(data.text || "");
      break;
    case "tool_started":
      openTools.push({ tool: data.tool, line: addActivity(`Running tool ${data.tool} ${compact(data.arguments)}`) });
      break;
    case "tool_finished":
      finishTool(data);
      break;
    case "bot_message":
      dropPreview();
      addBubble("bot", data.text, { seq: data.seq, buttons: data.buttons });
      break;
    case "paused":
      showPause(data);
      break;
    case "error":
      showAlert(`The turn failed: ${data.message} (${data.code})`);
      break;
    case "done":
      dropPreview();
      setState(data.state);
      if (data.state !== "paused") hidePause();
      break;
    default:
      break;
  }
}

function finishTool(data) {
  const index = openTools.findIndex((open) => open.tool === data.tool);
  const line = index === -1 ? addActivity("") : openTools.splice(index, 1)[0].line;
  if (data.is_error) {
    line.textContent = `Tool ${data.tool} failed: ${data.error_message || "error"}`;
    line.classList.add("activity-error");
  } else {
    line.textContent = `Tool ${data.tool} finished`;
  }
}

async function runTurn(url, body) {
  if (!getKey()) {
    showAlert("Save an API key with the chat scope first.");
    return;
  }
  showAlert("");
  running = true;
  openTools.length = 0;
  updateControls();
  ui.state.textContent = "State: running";
  loadedFor = ui.id.value.trim();
  try {
    await streamSSE(url, { method: "POST", body }, onFrame);
  } catch (error) {
    showAlert(describeError(error));
  } finally {
    dropPreview();
    running = false;
    updateControls();
    if (!document.activeElement || document.activeElement === document.body || document.activeElement.disabled) {
      ui.input.focus();
    }
  }
}

function validId() {
  const id = ui.id.value.trim();
  if (ID_PATTERN.test(id)) return true;
  showAlert("The conversation id needs 1 to 128 letters, digits or . _ : @ - (starting with a letter or digit).");
  ui.id.focus();
  return false;
}

async function sendText(text, shown = text) {
  if (running || !text.trim() || !validId()) return;
  addBubble("user", shown);
  await runTurn(conversationUrl("/messages"), { text });
}

async function resolvePause(approved) {
  if (!pause || running) return;
  const { pause_id: pauseId, tool } = pause;
  addActivity(`You ${approved ? "approved" : "denied"} ${tool}`, "activity-user");
  ui.approval.hidden = true;
  ui.input.focus();
  await runTurn(conversationUrl(`/approvals/${seg(pauseId)}`), { approved });
  if (pause && pause.pause_id === pauseId) hidePause();
}

async function cancelTurn() {
  try {
    await fetchJSON(conversationUrl("/cancel"), { method: "POST" });
    announce("Turn cancelled.");
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "conversation.not_running")) showAlert(describeError(error));
  }
}

async function loadHistory() {
  const id = ui.id.value.trim();
  if (!getKey() || !ID_PATTERN.test(id) || running || loadedFor === id) return;
  loadedFor = id;
  ui.log.replaceChildren();
  lastButtons = [];
  hidePause();
  setState("");
  try {
    let after = 0;
    for (;;) {
      const page = await fetchJSON(`${conversationUrl("/events")}?after=${after}`);
      for (const item of page.events) showLogged(item.event, item.seq);
      if (!page.events.length || page.events.at(-1).seq >= page.last_seq) break;
      after = page.events.at(-1).seq;
    }
    const view = await fetchJSON(conversationUrl());
    setState(view.state);
    if (view.pending_confirmation) showPause(view.pending_confirmation);
  } catch (error) {
    if (error instanceof ApiError && error.code === "conversation.not_found") setState("new");
    else showAlert(describeError(error));
  }
  updateControls();
}

let lastButtons = []; // the buttons of the last bot message shown from the log

function showLogged(event, seq) {
  if (event.type === "user_message") {
    // A tapped button is logged as its payload: show its title, as it was shown when sent.
    const tapped = lastButtons.find((button) => button.payload === event.text);
    addBubble("user", event.button_title || (tapped ? tapped.title : event.text));
  } else if (event.type === "bot_message") {
    lastButtons = event.buttons || [];
    addBubble("bot", event.text, { seq, buttons: event.buttons });
  }
}

function chooseConversation(id, fresh = false) {
  ui.id.value = id;
  sessionStorage.setItem(ID_STORAGE, id);
  loadedFor = null;
  showAlert("");
  if (fresh) markNew();
  else loadHistory();
}

/** A freshly generated id has no history to load. */
function markNew() {
  loadedFor = ui.id.value;
  ui.log.replaceChildren();
  hidePause();
  setState("new");
  updateControls();
}

function start() {
  const wanted = new URLSearchParams(window.location.search).get("conversation");
  const known = wanted || sessionStorage.getItem(ID_STORAGE);
  ui.id.value = known || randomId();
  sessionStorage.setItem(ID_STORAGE, ui.id.value);
  if (!known) markNew();
  ui.id.addEventListener("change", () => chooseConversation(ui.id.value.trim()));
  ui.fresh.addEventListener("click", () => {
    chooseConversation(randomId(), true);
    ui.input.focus();
  });
  ui.composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = ui.input.value;
    if (!text.trim() || running) return;
    ui.input.value = "";
    sendText(text);
  });
  ui.input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ui.composer.requestSubmit();
    }
  });
  ui.cancel.addEventListener("click", cancelTurn);
  ui.approve.addEventListener("click", () => resolvePause(true));
  ui.deny.addEventListener("click", () => resolvePause(false));
  updateControls();
  setupKeyForm(() => {
    if (loadedFor !== ui.id.value.trim() || ui.state.textContent !== "State: new") {
      loadedFor = null;
      loadHistory();
    }
  });
}

start();
