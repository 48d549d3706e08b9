// The public /v1 API from the browser: the API key (sessionStorage), requests, problem+json.

const KEY = "lighttouch.apiKey";

/** The API key of this tab, or null. */
export function apiKey() {
  return sessionStorage.getItem(KEY);
}

/** Keep `key` for this tab only (sessionStorage); null forgets it. */
export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

/** Request headers with the Bearer key, if there is one. */
export function authHeaders(extra = {}) {
  const key = apiKey();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : { ...extra };
}

/** An error answer of the API: its RFC 9457 problem document. */
export class ApiError extends Error {
  constructor(problem) {
    super(problem.detail || problem.title);
    this.problem = problem;
    this.status = problem.status;
  }

  /** The problem of a failed response (a plain one if the body is not problem+json). */
  static async from(response) {
    let problem = null;
    try {
      problem = await response.json();
    } catch {
      problem = null;
    }
    if (!problem || typeof problem !== "object" || !problem.status) {
      problem = { status: response.status, title: response.statusText || "Request failed",
        detail: `the server answered ${response.status}` };
    }
    return new ApiError(problem);
  }
}

/** The problem of a network failure (the API cannot be reached). */
function unreachable(error) {
  return new ApiError({ status: 0, title: "Service unreachable",
    detail: `the API could not be reached (${error.message}); check the connection and retry` });
}

/**
 * Call the API.
 * @param {string} path - e.g. "/v1/jobs"
 * @param {Object} [options] - method, body (a string is sent as is, else JSON), signal
 * @returns {Promise<Response>} a successful response; throws ApiError otherwise
 */
export async function call(path, { method = "GET", body, signal } = {}) {
  const headers = authHeaders({ Accept: "application/json, application/problem+json" });
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, signal, cache: "no-store",
      body: body === undefined || typeof body === "string" ? body : JSON.stringify(body) });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw unreachable(error);
  }
  if (!response.ok) throw await ApiError.from(response);
  return response;
}

/** Call the API and decode its JSON answer. */
export async function json(path, options) {
  return (await call(path, options)).json();
}

/** Fetch `path` with the key and save it as `filename` (a link cannot send the header). */
export async function download(path, filename) {
  const blob = await (await call(path)).blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Whether the API answers without a key (open dev mode), from /healthz. */
export async function isOpen() {
  const health = await json("/healthz");
  return health.api_key_required === false;
}
