// The web chat's message log (`role="log"`): message bubbles with their suggested-reply
// buttons, the confirmation a paused tool call waits for (one pair of buttons under the
// question), a "Working on it…" line while tools run, the streaming preview of the bot's
// text, and the replay of a conversation's logged events. The end user never reads a tool's
// name here (the Inspector shows those). Pure DOM: no requests.
import { el } from "./api.js";

const WORKING = "Working on it…";
const AFFIRM = /^\s*(yes|y|yeah|yep|ok|okay|sure|confirm|confirmed|approve|\/affirm)\b/i;
const DENY = /^\s*(no|n|nope|deny|decline|\/deny)\b/i;

/**
 * The titles of the two confirmation buttons: the question's own buttons when they say yes
 * and no (their payloads), else "Yes" and "No". `buttons`: [{title, payload}].
 */
export function confirmationTitles(buttons = []) {
  const yes = buttons.find((b) => AFFIRM.test(b.payload || ""));
  const no = buttons.find((b) => DENY.test(b.payload || ""));
  return { yes: yes ? yes.title : "Yes", no: no ? no.title : "No" };
}

export class MessageLog {
  /** `element`: the log; `onButton(payload, title)`: a suggested reply was clicked. */
  constructor(element, onButton) {
    this.element = element;
    this.onButton = onButton;
    this.preview = null; // the bubble showing text_delta previews
    this.working = null; // the "Working on it…" line while a tool runs
    this.confirmation = null; // {bubble, group, hidden} of the pending confirmation
    this.lastButtons = []; // the buttons of the last bot message replayed from the log
    this.turnHeard = false; // the replayed turn has a user message
  }

  scrollDown() {
    this.element.scrollTop = this.element.scrollHeight;
  }

  /** Empty the log (a conversation's history is about to be shown, or none). */
  clear() {
    this.element.replaceChildren();
    this.lastButtons = [];
    this.working = null;
    this.confirmation = null;
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
    bubble.buttons = extra.buttons || [];
    this.element.append(bubble);
    this.scrollDown();
    return bubble;
  }

  /** A one-line note between the bubbles (working, cancelled). */
  activity(text, className = "") {
    const line = el("div", { className: `activity ${className}`.trim(), text });
    this.element.append(line);
    this.scrollDown();
    return line;
  }

  /** Append streamed text to the preview bubble (hidden from assistive technology). */
  showPreview(text) {
    this.stopWorking();
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

  /** A tool started: say "Working on it…" once (no tool name: that is for developers). */
  startWorking() {
    if (!this.working) this.working = this.activity(WORKING, "activity-working");
  }

  /** The bot speaks, or the turn is over: the working line goes. */
  stopWorking() {
    if (this.working) this.working.remove();
    this.working = null;
  }

  /** The turn was cancelled: say so in the log. */
  turnCancelled() {
    this.stopWorking();
    this.activity("Turn cancelled.", "activity-cancelled");
  }

  /** The last bot bubble, or null. */
  lastBotBubble() {
    const bots = this.element.querySelectorAll(".message-bot:not(.preview)");
    return bots.length ? bots[bots.length - 1] : null;
  }

  /**
   * Show the one confirmation of a paused tool call (`pending`: {ask}) under the question:
   * the last bot bubble (a bubble with the question is added when there is none). Its own
   * suggested replies give way to the pair of buttons (titled after them when they say yes
   * and no); `onAnswer(approved, title)` runs
   * when one is chosen.
   */
  showConfirmation(pending, onAnswer) {
    this.clearConfirmation();
    const bubble = this.lastBotBubble() || this.bubble("bot", pending.ask || "Shall I go ahead?");
    const titles = confirmationTitles(bubble.buttons);
    const own = bubble.querySelector(".message-buttons");
    if (own) own.remove(); // the question's own yes/no replies: the pair below replaces them
    const group = el(
      "div",
      { className: "message-buttons confirmation", role: "group", "aria-label": "Confirm" },
      el("button", { type: "button", className: "primary", text: titles.yes, dataset: { answer: "yes" }, onclick: () => onAnswer(true, titles.yes) }),
      el("button", { type: "button", text: titles.no, dataset: { answer: "no" }, onclick: () => onAnswer(false, titles.no) }),
    );
    bubble.append(group);
    this.confirmation = { bubble, group };
    this.scrollDown();
    return group;
  }

  /** The confirmation was answered (or withdrawn): its buttons go, for good. */
  clearConfirmation() {
    if (!this.confirmation) return;
    const { bubble, group } = this.confirmation;
    group.remove();
    bubble.buttons = [];
    this.confirmation = null;
  }

  /** Show one logged event of the history (messages, answered confirmations, cancelled turns). */
  replay(event, seq) {
    if (event.type === "turn_started") {
      this.turnHeard = false;
    } else if (event.type === "user_message" && event.text === "/session_start") {
      // the greeting's request, sent by the page when the conversation opened: not the user's
    } else if (event.type === "user_message") {
      this.turnHeard = true;
      // A tapped button is logged as its payload: show its title, as it was shown when sent.
      const tapped = this.lastButtons.find((button) => button.payload === event.text);
      this.bubble("user", event.button_title || (tapped ? tapped.title : event.text));
    } else if (event.type === "bot_message") {
      this.lastButtons = event.buttons || [];
      this.bubble("bot", event.text, { seq, buttons: event.buttons });
    } else if (event.type === "pause_point_resolved" && !this.turnHeard && !event.metadata?.reason) {
      // answered with the confirmation buttons (the approval API): the answer as it was shown
      const titles = confirmationTitles(this.lastButtons);
      const bubble = this.lastBotBubble();
      if (bubble) {
        const own = bubble.querySelector(".message-buttons");
        if (own) own.remove();
      }
      this.bubble("user", event.approved ? titles.yes : titles.no);
    } else if (event.type === "turn_ended" && event.stop_reason === "cancelled") {
      this.activity("Turn cancelled.", "activity-cancelled");
    }
  }
}
