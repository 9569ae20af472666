/**
 * The one error catalog. Every error that crosses a module boundary is a WinnowerError with a
 * stable code `WNW_ERR_<AREA>_<WHAT>`; callers branch on `code`, the server maps `status` to HTTP
 * in one place. docs/errors.md has a row per code (test/errors.unit.test.ts keeps them in sync).
 */
export const ERROR_CATALOG = {
  // configuration and input
  WNW_ERR_CFG_INVALID: { status: 400, message: 'invalid configuration' },
  WNW_ERR_INPUT_INVALID: { status: 400, message: 'invalid input' },
  WNW_ERR_INPUT_FORMAT: { status: 400, message: 'unrecognised input format' },
  WNW_ERR_INPUT_NOT_FOUND: { status: 400, message: 'input file not found' },
  WNW_ERR_INPUT_TOO_LARGE: { status: 413, message: 'request is larger than a server cap' },
  // value model and tokenizer
  WNW_ERR_SCORE_MODEL: { status: 500, message: 'value model could not be loaded or has an unsupported signature' },
  WNW_ERR_SCORE_TOKENIZER: { status: 500, message: 'tokenizer could not be loaded or is unsuitable' },
  WNW_ERR_SCORE_UPSTREAM: { status: 502, message: 'value model server failed' },
  WNW_ERR_SCORE_RESPONSE: { status: 502, message: 'value model server sent a malformed response' },
  WNW_ERR_SCORE_TIMEOUT: { status: 504, message: 'value model request timed out' },
  WNW_ERR_SCORE_UNAVAILABLE: { status: 503, message: 'value model is not answering (readiness probe)' },
  WNW_ERR_SCORE_BACKEND: { status: 400, message: 'unknown scorer backend' },
  WNW_ERR_SCORE_TEMPLATE: { status: 400, message: 'unknown or invalid serialization template' },
  WNW_ERR_SCORE_TOO_LONG: { status: 422, message: 'input is longer than the value model accepts' },
  WNW_ERR_SCORE_RELOAD: { status: 422, message: 'model folder was not loaded; the current model keeps serving' },
  // sandboxes
  WNW_ERR_SBX_UNAVAILABLE: { status: 503, message: 'sandbox provider is not available on this host' },
  WNW_ERR_SBX_PROVIDER: { status: 400, message: 'unknown sandbox provider' },
  WNW_ERR_SBX_REPO: { status: 400, message: 'repository or commit not found' },
  WNW_ERR_SBX_CREATE: { status: 502, message: 'sandbox could not be created' },
  WNW_ERR_SBX_EXEC: { status: 502, message: 'command could not be run in the sandbox' },
  WNW_ERR_SBX_CLOSED: { status: 409, message: 'sandbox is closed' },
  WNW_ERR_SBX_LOST: { status: 502, message: 'sandbox is lost (its exec agent, pod or container died, or it was reaped); create a new one' },
  WNW_ERR_SBX_FILE: { status: 404, message: 'file not found in sandbox' },
  WNW_ERR_SBX_PATCH: { status: 422, message: 'patch does not apply' },
  WNW_ERR_SBX_PATCH_SIZE: { status: 422, message: 'patch is larger than its size cap' },
  WNW_ERR_SBX_DISK: { status: 507, message: 'sandbox disk cap reached' },
  WNW_ERR_SBX_UPSTREAM: { status: 502, message: 'sandbox service failed' },
  WNW_ERR_SBX_TIMEOUT: { status: 504, message: 'sandbox service timed out' },
  WNW_ERR_SBX_UNSUPPORTED: { status: 501, message: 'operation not supported by this sandbox provider' },
  WNW_ERR_SBX_IMAGE: { status: 400, message: 'container image not found, not readable or not usable' },
  WNW_ERR_SBX_REGISTRY: { status: 502, message: 'image registry unreachable or failing' },
  // policy (the agent's model)
  WNW_ERR_POLICY_UPSTREAM: { status: 502, message: 'policy server failed' },
  WNW_ERR_POLICY_RESPONSE: { status: 502, message: 'policy server sent a malformed response' },
  WNW_ERR_POLICY_TIMEOUT: { status: 504, message: 'policy request timed out' },
  WNW_ERR_POLICY_REPLAY: { status: 400, message: 'recorded trajectory cannot be replayed' },
  // the pairwise judge of selection (src/judge)
  WNW_ERR_JUDGE_UPSTREAM: { status: 502, message: 'judge server failed' },
  WNW_ERR_JUDGE_RESPONSE: { status: 502, message: 'judge server sent a malformed or unusable response' },
  WNW_ERR_JUDGE_TIMEOUT: { status: 504, message: 'judge request timed out' },
  // harnesses (third-party agent CLIs)
  WNW_ERR_HARNESS_UNKNOWN: { status: 400, message: 'no harness definition of that name' },
  WNW_ERR_HARNESS_MISSING: { status: 400, message: 'harness CLI is not installed on this server' },
  WNW_ERR_HARNESS_FAILED: { status: 502, message: 'harness exited with an error' },
  // verification
  WNW_ERR_SETUP_FAILED: { status: 422, message: 'a setup command of the job failed' },
  WNW_ERR_VERIFY_NO_TESTS: { status: 400, message: 'task has no tests to run' },
  WNW_ERR_VERIFY_PARSE: { status: 500, message: 'test log could not be parsed' },
  // selection
  WNW_ERR_SELECT_CANDIDATE: { status: 422, message: 'candidate could not be prepared for selection' },
  // jobs, server
  WNW_ERR_JOB_NOT_FOUND: { status: 404, message: 'job not found' },
  WNW_ERR_CANDIDATE_NOT_FOUND: { status: 404, message: 'job has no such candidate, or it has no trajectory yet' },
  WNW_ERR_JOB_STATE: { status: 409, message: 'job is not in a state that allows this' },
  WNW_ERR_STORE_UNAVAILABLE: { status: 503, message: 'the job store is not answering' },
  WNW_ERR_AUTH_MISSING: { status: 401, message: 'API key required' },
  WNW_ERR_AUTH_INVALID: { status: 403, message: 'API key not accepted' },
  WNW_ERR_AUTH_ADMIN: { status: 403, message: 'admin routes need an admin key, or a client on this host' },
  WNW_ERR_LIMIT_RATE: { status: 429, message: 'too many requests for this API key' },
  WNW_ERR_LIMIT_QUEUE: { status: 503, message: 'too many jobs queued' },
  WNW_ERR_LIMIT_BUSY: { status: 503, message: 'too many scoring requests in progress' },
  WNW_ERR_OP_ABORTED: { status: 499, message: 'operation cancelled' },
  WNW_ERR_OP_INTERNAL: { status: 500, message: 'internal error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface WinnowerErrorOptions {
  cause?: unknown;
  /** Structured context: field, file, line, url, request id, ... */
  details?: Record<string, unknown>;
  /** Whether repeating the same call may succeed (transient upstream trouble). */
  retryable?: boolean;
}

const MARKER = Symbol.for('winnower.error');

export class WinnowerError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown>;
  readonly retryable: boolean;
  readonly [MARKER] = true;

  constructor(code: ErrorCode, message?: string, options: WinnowerErrorOptions = {}) {
    super(message ?? ERROR_CATALOG[code].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WinnowerError';
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.details = options.details ?? {};
    this.retryable = options.retryable ?? false;
  }

  /** Works across two copies of the module, unlike instanceof. */
  static isInstance(value: unknown): value is WinnowerError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }

  /** The wire shape of an error: `details` only when there are some. */
  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return { code: this.code, message: this.message, ...(Object.keys(this.details).length ? { details: this.details } : {}) };
  }
}

/** Shorthand: `throw wnwError('WNW_ERR_SBX_PATCH', 'hunk 2 of a.py rejected', { details })`. */
export function wnwError(code: ErrorCode, message?: string, options?: WinnowerErrorOptions): WinnowerError {
  return new WinnowerError(code, message, options);
}

/** Wraps anything thrown into a WinnowerError, keeping it as the cause. */
export function toWinnowerError(error: unknown, fallback: ErrorCode = 'WNW_ERR_OP_INTERNAL'): WinnowerError {
  if (WinnowerError.isInstance(error)) return error;
  if (error instanceof Error && error.name === 'AbortError') {
    return new WinnowerError('WNW_ERR_OP_ABORTED', error.message, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new WinnowerError(fallback, message, { cause: error });
}

/** The WNW_ERR_OP_ABORTED of an operation stopped by `signal`, its reason as the cause. */
export function abortedError(signal: AbortSignal): WinnowerError {
  return new WinnowerError('WNW_ERR_OP_ABORTED', 'operation cancelled', { cause: signal.reason });
}

/** Throws WNW_ERR_OP_ABORTED when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}
