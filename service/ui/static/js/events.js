// A job's server-sent events over fetch() (EventSource cannot send the Bearer header),
// resumed with Last-Event-ID after a dropped connection.

import { ApiError, authHeaders } from "./api.js";

const FINAL = new Set(["succeeded", "failed", "cancelled"]);

/** Whether an event is the job's last one (a result, or a status with a final status). */
export function isFinal(event) {
  return event.type === "result" || (event.type === "status" && FINAL.has(event.data.status));
}

/** Split complete SSE blocks off `buffer`: [events, rest]. */
export function parseBlocks(buffer) {
  const events = [];
  const blocks = buffer.replace(/\r\n?/g, "\n").split("\n\n");
  const rest = blocks.pop();
  for (const block of blocks) {
    const event = { id: null, type: "message", data: [], retry: null };
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") event.id = value;
      else if (field === "event") event.type = value;
      else if (field === "data") event.data.push(value);
      else if (field === "retry" && /^\d+$/.test(value)) event.retry = Number(value);
    }
    if (event.data.length) events.push({ ...event, data: JSON.parse(event.data.join("\n")) });
    else if (event.retry !== null) events.push({ ...event, data: null, type: "retry" });
  }
  return [events, rest];
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/**
 * Follow a job's events until its last one (or `signal` aborts).
 * @param {string} path - the job's events link
 * @param {Object} handlers - onEvent({id, type, data}); onConnection("live"|"reconnecting")
 * @param {AbortSignal} signal
 * @returns {Promise<void>} resolves when the job's events have ended; rejects with ApiError
 */
export async function followEvents(path, { onEvent, onConnection = () => {} }, signal) {
  let lastId = null;
  let retryMs = 1000;
  while (!signal.aborted) {
    const headers = authHeaders({ Accept: "text/event-stream" });
    if (lastId) headers["Last-Event-ID"] = lastId;
    let finished = false;
    try {
      const response = await fetch(path, { headers, signal, cache: "no-store" });
      if (response.status === 204) return;
      if (!response.ok) throw await ApiError.from(response);
      onConnection("live");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      while (!finished) {
        const { value, done } = await reader.read();
        if (done) break;
        let events;
        [events, buffer] = parseBlocks(buffer + value);
        for (const event of events) {
          if (event.retry !== null) retryMs = event.retry;
          if (event.type === "retry") continue;
          if (event.id) lastId = event.id;
          onEvent(event);
          if (isFinal(event)) finished = true;
        }
      }
      if (finished) {
        reader.cancel().catch(() => {});
        return;
      }
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (signal.aborted) return;
    }
    onConnection("reconnecting");
    await pause(retryMs, signal);
  }
}
