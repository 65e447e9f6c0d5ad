// The web chat's handling of a turn's server-sent frames (keel/server/sse.py): text_delta,
// tool_started, tool_finished, bot_message, paused, error and done, shown in the message log,
// the approval box and the state badge.
import { compact, showAlert } from "./api.js";

/**
 * The frame handler of a turn. `page`: {log (a MessageLog), showPause(data), hidePause(),
 * setState(state)}. Returns `onFrame({event, data})` for `streamSSE`.
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
        log.toolStarted(data.tool, `Running tool ${data.tool} ${compact(data.arguments)}`);
        break;
      case "tool_finished":
        log.toolFinished(data);
        break;
      case "bot_message":
        log.dropPreview();
        log.bubble("bot", data.text, { seq: data.seq, buttons: data.buttons });
        break;
      case "paused":
        page.showPause(data);
        break;
      case "error":
        showAlert(`The turn failed: ${data.message} (${data.code})`);
        break;
      case "done":
        log.dropPreview();
        if (data.stop_reason === "cancelled") log.turnCancelled();
        page.setState(data.state);
        if (data.state !== "paused") page.hidePause();
        break;
      default:
        break;
    }
  };
}
