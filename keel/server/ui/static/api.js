// Keel web UI: the API key, JSON requests with auth, and server-sent events read with fetch.
// Shared by chat.js, inspector.js and plans.js. No framework, no build: an ES module.

const KEY_STORAGE = "keel.key";

/** An API error: the HTTP status and the server's coded error (`{"error": {code, message}}`). */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

/** The stored API key, or "" when none is saved. */
export function getKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) || "";
  } catch {
    return "";
  }
}

/** Save (or, with "", forget) the API key for this browser tab. */
export function setKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // storage refused (private mode): the key lasts until the page is left
  }
}

/** Take `#key=...` from the address (as `keel run` prints it), store it, drop the fragment. */
export function keyFromFragment() {
  const hash = window.location.hash.replace(/^#/, "");
  if (!hash) return false;
  const params = new URLSearchParams(hash);
  const key = params.get("key");
  if (!key) return false;
  setKey(key);
  params.delete("key");
  const rest = params.toString();
  const url = window.location.pathname + window.location.search + (rest ? `#${rest}` : "");
  history.replaceState(null, "", url);
  return true;
}

function authHeaders(extra) {
  const headers = new Headers(extra || {});
  const key = getKey();
  if (key) headers.set("Authorization", `Bearer ${key}`);
  return headers;
}

async function errorFrom(response) {
  let code = "http.error";
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, code, message);
}

/**
 * Fetch JSON with the key. `options`: {method, body (an object, sent as JSON), signal}.
 * Resolves to the parsed answer; rejects with ApiError for a non-2xx answer.
 */
export async function fetchJSON(url, options = {}) {
  const init = { method: options.method || "GET", signal: options.signal };
  const headers = { Accept: "application/json" };
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  init.headers = authHeaders(headers);
  const response = await fetch(url, init);
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

/** Parse one server-sent event block into {event, data, id}, or null for a comment. */
export function parseFrame(block) {
  let event = "message";
  let id = null;
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    else if (field === "id") id = value;
  }
  if (!data.length && event === "message") return null;
  const text = data.join("\n");
  let parsed = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // leave non-JSON data as text
  }
  return { event, data: parsed, id };
}

/**
 * POST or GET a URL and read its `text/event-stream` answer with fetch (EventSource cannot
 * send the Authorization header). Calls `onFrame({event, data, id})` for every frame;
 * resolves when the stream ends; rejects with ApiError for a non-2xx answer. `init` is
 * {method, body (object), signal, headers}.
 */
export async function streamSSE(url, init, onFrame) {
  const headers = { Accept: "text/event-stream", ...(init.headers || {}) };
  const request = { method: init.method || "GET", signal: init.signal };
  if (init.body !== undefined) {
    headers["Content-Type"] = "application/json";
    request.body = JSON.stringify(init.body);
  }
  request.headers = authHeaders(headers);
  const response = await fetch(url, request);
  if (!response.ok) throw await errorFrom(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const frame = parseFrame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (frame) onFrame(frame);
      end = buffer.indexOf("\n\n");
    }
  }
  const last = parseFrame(buffer.trim());
  if (last) onFrame(last);
}

/** `encodeURIComponent` for one path segment. */
export const seg = (text) => encodeURIComponent(String(text));

/** A short, readable text for an error (coded API errors show their code). */
export function describeError(error) {
  if (error instanceof ApiError) return `${error.message} (${error.code}, HTTP ${error.status})`;
  if (error && error.name === "AbortError") return "Stopped.";
  return String((error && error.message) || error);
}

/** Create an element: el("li", {className: "x", text: "hi"}, child, ...). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name === "className") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Compact JSON for display ("" for undefined). */
export function compact(value) {
  return value === undefined ? "" : JSON.stringify(value);
}

/**
 * Wire the key form every page has (`#key-form`, `#key-input`, `#key-status`): reads
 * `#key=` from the address first, then shows whether a key is saved. `onSaved` runs after a
 * save (and at start when a key is there). While no key is saved the page's key prompt
 * (`#key-prompt`) is shown and its `.needs-key` panels are hidden.
 */
export function setupKeyForm(onSaved) {
  keyFromFragment();
  const form = document.getElementById("key-form");
  const input = document.getElementById("key-input");
  const status = document.getElementById("key-status");
  const show = () => {
    status.textContent = getKey() ? "A key is saved for this tab." : "No key saved yet.";
    showKeyPrompt(getKey() ? "" : "none");
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    setKey(input.value.trim());
    input.value = "";
    show();
    if (getKey()) onSaved();
  });
  const focusKey = document.getElementById("key-prompt-focus");
  if (focusKey) focusKey.addEventListener("click", () => input.focus());
  show();
  if (getKey()) onSaved();
}

/**
 * Show the key prompt instead of the panels that need a key: `why` is "none" (no key
 * saved), an ApiError the server answered with 401 or 403 (a wrong key, a missing scope),
 * or "" to hide the prompt. Returns whether the prompt is shown.
 */
export function showKeyPrompt(why) {
  const prompt = document.getElementById("key-prompt");
  if (!prompt) return false;
  const reason = document.getElementById("key-prompt-reason");
  const refused = why instanceof ApiError && (why.status === 401 || why.status === 403);
  const shown = why === "none" || refused;
  if (reason) {
    reason.textContent = refused ? `The saved key was refused: ${why.message} (${why.code}).` : "No API key is saved for this tab yet.";
  }
  prompt.hidden = !shown;
  for (const panel of document.querySelectorAll(".needs-key")) panel.hidden = shown;
  return shown;
}

/** Show a message in the page's alert region (`#alert`), or clear it with "". */
export function showAlert(text) {
  const alert = document.getElementById("alert");
  alert.textContent = text;
  alert.hidden = !text;
}

/** Announce a short status politely (`#status`). */
export function announce(text) {
  const status = document.getElementById("status");
  if (status) status.textContent = text;
}
