// @ts-check
// Talking to the qkv JSON API: every state-changing request carries the CSRF token from the page's meta tag,
// and every failure becomes an ApiError whose message is a sentence fit to show the learner.

export class ApiError extends Error {
  /**
   * @param {string} message  a sentence for the learner
   * @param {number} status   the HTTP status (0 when the server could not be reached)
   * @param {number|null} retryAfter  seconds the server's Retry-After header asks to wait, if it sent one
   */
  constructor(message, status, retryAfter = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.getAttribute("content") ?? "" : "";
}

/**
 * The sentence of an error answer's `detail` (FastAPI's validation errors joined), or null.
 *
 * @param {any} body  the answer's JSON, whatever the server sent
 * @returns {string|null}
 */
function detailOf(body) {
  if (body && typeof body.detail === "string") return body.detail;
  // FastAPI's own validation errors come as a list; join their messages.
  if (body && Array.isArray(body.detail)) {
    return body.detail.map((/** @type {{msg?: string}} */ item) => item.msg ?? String(item)).join("; ");
  }
  return null;
}

/**
 * POST a JSON body and return the parsed JSON answer.
 *
 * @param {string} url
 * @param {object} body
 * @returns {Promise<any>}
 * @throws {ApiError}
 */
export async function postJson(url, body) {
  return requestJson(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: JSON.stringify(body),
  });
}

/**
 * PUT a JSON body (same headers as postJson) and return the parsed JSON answer.
 *
 * @param {string} url
 * @param {object} body
 * @returns {Promise<any>}
 * @throws {ApiError}
 */
export async function putJson(url, body) {
  return requestJson(url, {
    method: "PUT",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: JSON.stringify(body),
  });
}

/**
 * GET a JSON document.
 *
 * @param {string} url
 * @returns {Promise<any>}
 * @throws {ApiError}
 */
export async function getJson(url) {
  return requestJson(url, { method: "GET", headers: { Accept: "application/json" } });
}

/**
 * @param {string} url
 * @param {RequestInit} init
 * @returns {Promise<any>}
 */
async function requestJson(url, init) {
  let response;
  try {
    response = await fetch(url, { credentials: "same-origin", ...init });
  } catch {
    throw new ApiError("The qkv server could not be reached. Check that it is still running, then try again.", 0);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const detail = detailOf(body);
    const retryAfter = secondsOf(response.headers.get("Retry-After"));
    if (response.status === 503) {
      // The server's sentence says which it is: the grader busy, grading off, or the database away.
      throw new ApiError(detail ?? "The grader is busy, retry in a moment.", 503, retryAfter);
    }
    throw new ApiError(detail ?? `The server answered with status ${response.status}.`, response.status, retryAfter);
  }
  if (body === null) {
    throw new ApiError("The server's answer was not valid JSON.", response.status);
  }
  return body;
}

/**
 * A Retry-After header's whole seconds (the form qkv sends), or null.
 *
 * @param {string|null} header
 * @returns {number|null}
 */
function secondsOf(header) {
  if (header === null || !/^\d{1,7}$/.test(header.trim())) return null;
  return Number.parseInt(header, 10);
}

/**
 * The path prefix of the current lesson's API, e.g. "/api/lessons/L9.1".
 *
 * @param {string} lessonId
 * @returns {string}
 */
export function lessonApi(lessonId) {
  return `/api/lessons/${encodeURIComponent(lessonId)}`;
}
