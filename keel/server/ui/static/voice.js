// Keel voice page: a call with the agent in the browser, over the WebSocket /v1/voice/browser
// (its protocol: keel/server/voice/browser.py, docs/voice.md).
//
// Start call asks for the microphone (getUserMedia), runs it through an AudioWorklet
// (voice-worklet.js) that downsamples it to 16 kHz PCM16 in 20 ms frames, and streams the
// frames as binary messages after a `start` message carrying the key (the web chat's: #key=
// in the address, kept for the tab). The agent's audio comes back as binary PCM16 16 kHz
// and is played gaplessly with WebAudio; a `mark` is echoed once the audio before it has
// played; `clear` (barge-in: the caller spoke over the agent) stops it at once. Transcripts
// of both sides are shown as they come (the caller's interim ones greyed until final).
import { ApiError, announce, el, getKey, setupKeyForm, showAlert, showKeyPrompt } from "./api.js";

const SOCKET_PATH = "/v1/voice/browser";
const RATE = 16000;
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

const $ = (id) => document.getElementById(id);
const ui = {
  id: $("conversation-id"),
  start: $("start-call"),
  hangUp: $("hang-up"),
  state: $("call-state"),
  audio: $("audio-state"),
  mic: $("mic-state"),
  log: $("transcript"),
};

function randomId() {
  const bytes = new Uint8Array(5);
  crypto.getRandomValues(bytes);
  return `voice-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Agent audio: PCM16 chunks played back to back; marks echoed once played; `clear`. */
class Player {
  constructor(context, onMark) {
    this.context = context;
    this.onMark = onMark;
    this.sources = new Set();
    this.timers = new Set();
    this.until = 0; // context time the queued audio ends
    this.chunks = 0;
    this.clears = 0;
    this.cut = 0; // sources the last clear stopped (playing or queued)
  }

  play(buffer) {
    const samples = new Int16Array(buffer);
    if (!samples.length) return;
    const audio = this.context.createBuffer(1, samples.length, RATE);
    const channel = audio.getChannelData(0);
    for (let i = 0; i < samples.length; i += 1) channel[i] = samples[i] / 0x8000;
    const source = this.context.createBufferSource();
    source.buffer = audio;
    source.connect(this.context.destination);
    const at = Math.max(this.context.currentTime, this.until);
    source.start(at);
    this.until = at + audio.duration;
    this.sources.add(source);
    source.addEventListener("ended", () => {
      this.sources.delete(source);
      this.show();
    });
    this.chunks += 1;
    this.show();
  }

  /** Echo mark `name` once the audio queued before it has played. */
  mark(name) {
    const wait = Math.max(0, this.until - this.context.currentTime) * 1000;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.onMark(name);
    }, wait);
    this.timers.add(timer);
  }

  /** Barge-in: stop at once (the server dropped the marks after this audio too). */
  clear() {
    this.cut = this.stop();
    this.clears += 1;
    this.show();
  }

  /** Stop the playing and queued audio and forget the marks waiting for it. */
  stop() {
    const stopped = this.sources.size;
    for (const source of this.sources) {
      try {
        source.stop();
      } catch {
        // not started yet: nothing to stop
      }
    }
    this.sources.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.until = 0;
    this.show();
    return stopped;
  }

  get playing() {
    return this.sources.size > 0;
  }

  show() {
    ui.audio.dataset.playing = String(this.playing);
    ui.audio.dataset.chunks = String(this.chunks);
    ui.audio.dataset.clears = String(this.clears);
    ui.audio.dataset.cut = String(this.cut);
    ui.audio.textContent = this.playing ? "Agent audio: playing" : "Agent audio: silent";
  }
}

/** The live transcript: final lines of both sides, the caller's interim line greyed. */
class Transcript {
  constructor(node) {
    this.node = node;
    this.interim = null;
    this.lastAgent = null;
  }

  line(role, text, final) {
    const who = role === "user" ? "You" : "Agent";
    const className = role === "user" ? "message message-user" : "message message-bot";
    if (role === "user" && !final) {
      if (!this.interim) {
        this.interim = el("div", { className: `${className} preview`, "aria-hidden": "true" });
        this.node.append(this.interim);
      }
      this.interim.replaceChildren(el("span", { className: "message-who", text: `${who}: ` }), el("span", { className: "message-text", text }));
    } else {
      if (role === "user" && this.interim) {
        this.interim.remove();
        this.interim = null;
      }
      const node = el("div", { className, dataset: { role } }, el("span", { className: "message-who", text: `${who}: ` }), el("span", { className: "message-text", text }));
      this.node.append(node);
      if (role === "agent") this.lastAgent = node;
    }
    this.node.scrollTop = this.node.scrollHeight;
  }

  activity(text, className = "") {
    this.node.append(el("div", { className: `activity ${className}`.trim(), text }));
    this.node.scrollTop = this.node.scrollHeight;
  }
}

const transcript = new Transcript(ui.log);
let call = null; // {socket, context, stream, worklet, player}

function setState(text) {
  ui.state.textContent = text;
}

function setControls() {
  ui.start.disabled = call !== null || !getKey();
  ui.hangUp.disabled = call === null;
  ui.id.disabled = call !== null;
}

function socketUrl() {
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${window.location.host}${SOCKET_PATH}`;
}

async function openMicrophone(context) {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false },
    video: false,
  });
  await context.audioWorklet.addModule("/ui/static/voice-worklet.js");
  const source = context.createMediaStreamSource(stream);
  const worklet = new AudioWorkletNode(context, "keel-downsampler", { numberOfInputs: 1, numberOfOutputs: 1, channelCount: 1 });
  const mute = context.createGain(); // keeps the worklet pulled without playing the microphone
  mute.gain.value = 0;
  source.connect(worklet);
  worklet.connect(mute);
  mute.connect(context.destination);
  return { stream, worklet, source };
}

function send(socket, message) {
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function onMessage(current, event) {
  if (typeof event.data !== "string") {
    current.player.play(event.data);
    return;
  }
  let message;
  try {
    message = JSON.parse(event.data);
  } catch {
    return;
  }
  switch (message.event) {
    case "started":
      ui.id.value = message.conversation_id;
      setState("In call");
      announce("The call is connected.");
      break;
    case "transcript":
      transcript.line(message.role, message.text, Boolean(message.final));
      break;
    case "mark":
      current.player.mark(message.name);
      break;
    case "clear":
      current.player.clear();
      transcript.activity("You interrupted the agent.", "activity-cancelled");
      break;
    case "hangup":
      transcript.activity("The agent ended the call.", "activity-user");
      endCall("Call ended");
      break;
    case "error":
      endCall("Not connected");
      if (message.status === 401 || message.status === 403) {
        showKeyPrompt(new ApiError(message.status, message.code, message.message));
        setControls();
      } else {
        showAlert(`${message.message} (${message.code})`);
      }
      break;
    default:
      break;
  }
}

async function startCall() {
  const id = ui.id.value.trim();
  if (!ID_PATTERN.test(id)) {
    showAlert("The conversation id must be 1-128 of A-Z a-z 0-9 . _ : @ -, starting with a letter or digit.");
    return;
  }
  showAlert("");
  ui.start.disabled = true;
  setState("Connecting…");
  const context = new AudioContext();
  let microphone;
  try {
    microphone = await openMicrophone(context);
  } catch (error) {
    await context.close();
    setState("Not connected");
    setControls();
    showAlert(`The microphone could not be opened: ${(error && error.message) || error}`);
    return;
  }
  const socket = new WebSocket(socketUrl());
  socket.binaryType = "arraybuffer";
  const current = { socket, context, ...microphone, player: null, sent: 0 };
  current.player = new Player(context, (name) => send(socket, { event: "mark", name }));
  call = current;
  setControls();
  ui.mic.textContent = "Microphone: on";
  microphone.worklet.port.onmessage = (event) => {
    if (socket.readyState !== WebSocket.OPEN || call !== current) return;
    socket.send(event.data);
    current.sent += 1;
    ui.mic.dataset.sent = String(current.sent);
  };
  socket.addEventListener("open", () => send(socket, { event: "start", key: getKey(), conversation_id: id }));
  socket.addEventListener("message", (event) => onMessage(current, event));
  socket.addEventListener("close", () => {
    if (call === current) endCall("Call ended");
  });
}

function endCall(state) {
  const current = call;
  if (current === null) return;
  call = null;
  current.worklet.port.postMessage("stop");
  current.worklet.port.onmessage = null;
  current.source.disconnect();
  for (const track of current.stream.getTracks()) track.stop();
  if (current.socket.readyState === WebSocket.OPEN) {
    send(current.socket, { event: "stop" });
    current.socket.close(1000);
  }
  current.player.stop();
  current.context.close();
  ui.mic.textContent = "Microphone: off";
  setState(state);
  setControls();
}

ui.id.value = randomId();
ui.start.addEventListener("click", () => startCall());
ui.hangUp.addEventListener("click", () => {
  transcript.activity("You hung up.", "activity-user");
  endCall("Call ended");
});
setupKeyForm(() => setControls());
setControls();
