// Keel web chat: talk to the agent through the chat API, streamed as server-sent events.
// The page controller: the conversation id, the composer, turns (send, approve or deny, cancel)
// and the history load. The log is drawn by chat-log.js, a turn's frames read by chat-frames.js.
import { ApiError, announce, describeError, fetchJSON, getKey, seg, setupKeyForm, showAlert, streamSSE } from "./api.js";
import { frameHandler } from "./chat-frames.js";
import { MessageLog } from "./chat-log.js";

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
let loadedFor = null; // the conversation whose history is shown
const log = new MessageLog(ui.log, (payload, title) => sendText(payload, title));
const onFrame = frameHandler({ log, showPause, hidePause, setState });

function randomId() {
  const bytes = new Uint8Array(5);
  crypto.getRandomValues(bytes);
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const conversationUrl = (suffix = "") => `/v1/conversations/${seg(ui.id.value.trim())}${suffix}`;

function setState(state) {
  ui.state.textContent = state ? `State: ${state}` : "";
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

async function runTurn(url, body) {
  if (!getKey()) {
    showAlert("Save an API key with the chat scope first.");
    return;
  }
  showAlert("");
  running = true;
  log.resetTools();
  updateControls();
  ui.state.textContent = "State: running";
  loadedFor = ui.id.value.trim();
  try {
    await streamSSE(url, { method: "POST", body }, onFrame);
  } catch (error) {
    showAlert(describeError(error));
  } finally {
    log.dropPreview();
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
  log.bubble("user", shown);
  await runTurn(conversationUrl("/messages"), { text });
}

async function resolvePause(approved) {
  if (!pause || running) return;
  const { pause_id: pauseId, tool } = pause;
  log.activity(`You ${approved ? "approved" : "denied"} ${tool}`, "activity-user");
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
  log.clear();
  hidePause();
  setState("");
  try {
    let after = 0;
    for (;;) {
      const page = await fetchJSON(`${conversationUrl("/events")}?after=${after}`);
      for (const item of page.events) log.replay(item.event, item.seq);
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
  log.clear();
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
