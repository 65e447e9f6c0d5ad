// The web chat's message log (`role="log"`): message bubbles with their suggested-reply
// buttons, activity lines (tool runs, approvals), the streaming preview of the bot's text, and
// the replay of a conversation's logged events (messages and cancelled turns). Pure DOM: no
// requests.
import { el } from "./api.js";

export class MessageLog {
  /** `element`: the log; `onButton(payload, title)`: a suggested reply was clicked. */
  constructor(element, onButton) {
    this.element = element;
    this.onButton = onButton;
    this.preview = null; // the bubble showing text_delta previews
    this.openTools = []; // {tool, line} of tools started and not yet finished
    this.lastButtons = []; // the buttons of the last bot message replayed from the log
  }

  scrollDown() {
    this.element.scrollTop = this.element.scrollHeight;
  }

  /** Empty the log (a conversation's history is about to be shown, or none). */
  clear() {
    this.element.replaceChildren();
    this.lastButtons = [];
  }

  /** A message bubble; `extra`: {seq, buttons: [{title, payload}]}. */
  bubble(role, text, extra = {}) {
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
            onclick: () => this.onButton(button.payload, button.title),
          }),
        );
      }
      bubble.append(row);
    }
    this.element.append(bubble);
    this.scrollDown();
    return bubble;
  }

  /** A one-line note between the bubbles (a tool run, an approval). */
  activity(text, className = "") {
    const line = el("div", { className: `activity ${className}`.trim(), text });
    this.element.append(line);
    this.scrollDown();
    return line;
  }

  /** Append streamed text to the preview bubble (hidden from assistive technology). */
  showPreview(text) {
    if (!this.preview) {
      this.preview = el("div", { className: "message message-bot preview", "aria-hidden": "true" });
      this.preview.append(el("span", { className: "message-who", text: "Agent: " }), el("span", { className: "message-text" }));
      this.element.append(this.preview);
    }
    this.preview.lastChild.textContent += text;
    this.scrollDown();
  }

  dropPreview() {
    if (this.preview) this.preview.remove();
    this.preview = null;
  }

  /** A new turn starts: no tool is running. */
  resetTools() {
    this.openTools.length = 0;
  }

  toolStarted(tool, text) {
    this.openTools.push({ tool, line: this.activity(text) });
  }

  /** Turn the tool's "Running" line into its outcome (`data` of a tool_finished frame). */
  toolFinished(data) {
    const index = this.openTools.findIndex((open) => open.tool === data.tool);
    const line = index === -1 ? this.activity("") : this.openTools.splice(index, 1)[0].line;
    if (data.is_error) {
      line.textContent = `Tool ${data.tool} failed: ${data.error_message || "error"}`;
      line.classList.add("activity-error");
    } else {
      line.textContent = `Tool ${data.tool} finished`;
    }
  }

  /** The turn was cancelled: tools still running were stopped; say so in the log. */
  turnCancelled() {
    for (const open of this.openTools.splice(0)) {
      open.line.textContent = `Tool ${open.tool} was stopped`;
      open.line.classList.add("activity-error");
    }
    this.activity("Turn cancelled.", "activity-cancelled");
  }

  /** Show one logged event of the history (messages and cancelled turns; the rest is skipped). */
  replay(event, seq) {
    if (event.type === "user_message") {
      // A tapped button is logged as its payload: show its title, as it was shown when sent.
      const tapped = this.lastButtons.find((button) => button.payload === event.text);
      this.bubble("user", event.button_title || (tapped ? tapped.title : event.text));
    } else if (event.type === "bot_message") {
      this.lastButtons = event.buttons || [];
      this.bubble("bot", event.text, { seq, buttons: event.buttons });
    } else if (event.type === "turn_ended" && event.stop_reason === "cancelled") {
      this.activity("Turn cancelled.", "activity-cancelled");
    }
  }
}
