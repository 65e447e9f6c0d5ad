// The web chat's handling of a turn's server-sent frames (keel/server/sse.py): text_delta,
// tool_started, tool_finished, bot_message, paused, error and done, shown in the message log
// and the state badge. Tool frames show only "Working on it…" (no tool names: the Inspector
// is where developers read those); a paused call's confirmation is shown when the turn ends.
import { showAlert } from "./api.js";

/**
 * The frame handler of a turn. `page`: {log (a MessageLog), paused(data), turnDone(data)}.
 * Returns `onFrame({event, data})` for `streamSSE`.
 */
export function frameHandler(page) {
  const { log } = page;
  return (frame) => {
    const data = frame.data || {};
    switch (frame.event) {
      case "text_delta":
        log.showPreview(data.text || "");
        break;
      case "tool_started":
        log.startWorking();
        break;
      case "bot_message":
        log.dropPreview();
        log.stopWorking();
        log.bubble("bot", data.text, { seq: data.seq, buttons: data.buttons });
        break;
      case "paused":
        page.paused(data);
        break;
      case "error":
        showAlert(`The turn failed: ${data.message} (${data.code})`);
        break;
      case "done":
        log.dropPreview();
        log.stopWorking();
        if (data.stop_reason === "cancelled") log.turnCancelled();
        page.turnDone(data);
        break;
      default:
        break;
    }
  };
}
