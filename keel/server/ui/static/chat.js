// Keel web chat: talk to the agent through the chat API, streamed as server-sent events.
// The page controller: the conversation id, the greeting of a new conversation, the composer,
// turns (send, answer a confirmation, cancel) and the history load. The log is drawn by
// chat-log.js, a turn's frames read by chat-frames.js.
//
// A conversation id made here is "fresh" until its first turn: it has no log yet, so its
// history is never asked for (that would be a 404); it is greeted with `/session_start`
// as soon as a key is saved, and only a conversation with a turn is remembered for the tab.
import { ApiError, announce, describeError, fetchJSON, getKey, seg, setupKeyForm, showAlert, streamSSE } from "./api.js";
import { frameHandler } from "./chat-frames.js";
import { MessageLog } from "./chat-log.js";

const ID_STORAGE = "keel.chat.conversation";
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;
const SESSION_START = "/session_start";

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
};

let running = false;
let fresh = false; // the id was made here and has no turn yet
let pause = null; // the pending {pause_id, tool, ask, arguments}
let loadedFor = null; // the conversation whose history is shown
const log = new MessageLog(ui.log, (payload, title) => sendText(payload, title));
const onFrame = frameHandler({ log, paused: (data) => (pause = data), turnDone });

function randomId() {
  const bytes = new Uint8Array(5);
  crypto.getRandomValues(bytes);
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const currentId = () => ui.id.value.trim();
const conversationUrl = (suffix = "") => `/v1/conversations/${seg(currentId())}${suffix}`;

function setState(state) {
  ui.state.textContent = state ? `State: ${state}` : "";
}

function remember(id) {
  fresh = false;
  try {
    sessionStorage.setItem(ID_STORAGE, id);
  } catch {
    // storage refused: the conversation lasts until the page is left
  }
}

function updateControls() {
  ui.send.disabled = running;
  ui.cancel.disabled = !running;
  for (const button of ui.log.querySelectorAll(".message-buttons button")) button.disabled = running;
}

/** Show the confirmation of the pending pause under its question (one pair of buttons). */
function showPause(pending) {
  pause = pending;
  log.showConfirmation(pending, answerPause);
  updateControls();
}

function hidePause() {
  pause = null;
  log.clearConfirmation();
}

/** The `done` frame: the conversation exists now; a paused turn shows its confirmation. */
async function turnDone(data) {
  remember(loadedFor);
  setState(data.state);
  if (data.state !== "paused") {
    hidePause();
    return;
  }
  if (pause) {
    showPause(pause);
    return;
  }
  try {
    // still paused (an answer that was not a yes or a no): the pending call is unchanged
    const view = await fetchJSON(conversationUrl());
    if (view.pending_confirmation) showPause(view.pending_confirmation);
  } catch (error) {
    showAlert(describeError(error));
  }
}

async function runTurn(url, body) {
  if (!getKey()) {
    showAlert("Save an API key with the chat scope first.");
    return;
  }
  showAlert("");
  running = true;
  log.clearConfirmation();
  updateControls();
  ui.state.textContent = "State: running";
  loadedFor = currentId();
  try {
    await streamSSE(url, { method: "POST", body }, onFrame);
  } catch (error) {
    showAlert(describeError(error));
  } finally {
    log.dropPreview();
    log.stopWorking();
    running = false;
    updateControls();
    if (!document.activeElement || document.activeElement === document.body || document.activeElement.disabled) {
      ui.input.focus();
    }
  }
}

function validId() {
  if (ID_PATTERN.test(currentId())) return true;
  showAlert("The conversation id needs 1 to 128 letters, digits or . _ : @ - (starting with a letter or digit).");
  ui.id.focus();
  return false;
}

async function sendText(text, shown = text) {
  if (running || !text.trim() || !validId()) return;
  log.bubble("user", shown);
  await runTurn(conversationUrl("/messages"), { text });
}

/** A new conversation opens with the agent's greeting (the session start), not a blank log. */
async function greet() {
  if (!fresh || running || !getKey() || !validId()) return;
  await runTurn(conversationUrl("/messages"), { text: SESSION_START });
}

/** Answer the pending confirmation with one of its buttons (the approval API, exactly once). */
async function answerPause(approved, title) {
  if (!pause || running) return;
  const { pause_id: pauseId } = pause;
  log.clearConfirmation();
  log.bubble("user", title);
  ui.input.focus();
  await runTurn(conversationUrl(`/approvals/${seg(pauseId)}`), { approved });
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
  const id = currentId();
  if (!getKey() || !ID_PATTERN.test(id) || running || loadedFor === id) return;
  loadedFor = id;
  log.clear();
  pause = null;
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
    remember(id);
    setState(view.state);
    if (view.pending_confirmation) showPause(view.pending_confirmation);
  } catch (error) {
    if (error instanceof ApiError && error.code === "conversation.not_found") {
      // an id typed in (or linked) that has no log: it starts as a new conversation
      fresh = true;
      setState("new");
      await greet();
    } else {
      showAlert(describeError(error));
    }
  }
  updateControls();
}

/** A freshly made id: an empty log, greeted once a key is there. */
function startFresh() {
  ui.id.value = randomId();
  fresh = true;
  loadedFor = currentId();
  log.clear();
  pause = null;
  setState("new");
  updateControls();
  greet();
}

function start() {
  let known = new URLSearchParams(window.location.search).get("conversation");
  try {
    known = known || sessionStorage.getItem(ID_STORAGE);
  } catch {
    // no storage: a new conversation
  }
  if (known) ui.id.value = known;
  else startFresh();
  ui.id.addEventListener("change", () => {
    showAlert("");
    fresh = false;
    loadedFor = null;
    loadHistory();
  });
  ui.fresh.addEventListener("click", () => {
    showAlert("");
    startFresh();
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
  updateControls();
  setupKeyForm(() => {
    if (fresh) {
      greet();
    } else {
      loadedFor = null;
      loadHistory();
    }
  });
}

start();
