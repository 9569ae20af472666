/**
 * One load run with autocannon: a fixed number of connections for a duration or a request count,
 * every request made distinct by a counter spliced into its body (so a server's score cache
 * cannot answer it), summarised as requests/s, latency percentiles and failures. A progress
 * line on stderr while it runs.
 */
import autocannon from 'autocannon';
import { wnwError } from '../errors.js';

export interface LoadRequest {
  method: 'POST' | 'GET';
  /** Path and query below the base URL. */
  path: string;
  headers?: Record<string, string>;
  /** The body around the places where each request's number goes: `parts.join(n)`; one part: the same body every time. */
  bodyParts?: string[];
  /** A 2xx answer that is a failure all the same (winnower answers /score 200 with an error in place of a score it could not get): counted in `failed_answers`. */
  failedAnswer?: (body: string) => boolean;
}

export interface LoadOptions {
  connections: number;
  /** Seconds; ignored when `amount` is set. */
  durationS: number;
  /** Requests in all, instead of a duration. */
  amount?: number;
  /** A fixed rate, requests per second over all connections (default: as fast as answers come). */
  ratePerS?: number;
  /** Per-request timeout in seconds (autocannon's, counted in `timeouts`). */
  timeoutS: number;
  /** A label for the progress line. */
  label: string;
  progress: boolean;
  /** Where request numbers come from (default 1, 2, …): runs that share one never send the same text twice, so no prefix or score cache answers a later run. */
  nextNumber?: () => number;
}

export interface LoadResult {
  connections: number;
  duration_s: number;
  requests: number;
  requests_per_s: number;
  latency_ms: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** Connection errors (timeouts included). */
  errors: number;
  timeouts: number;
  /** Requests sent but neither answered nor failed when the window closed. */
  in_flight: number;
  /**
   * More requests still in flight than finished when the window closed (none at all finished, in
   * the worst case): the rate and latencies describe only the few that finished, the fast ones.
   */
  incomplete: boolean;
  non_2xx: number;
  /** 2xx answers `failedAnswer` called failures. */
  failed_answers: number;
  status_codes: Record<string, number>;
}

/** Runs the load; resolves with its summary. */
export async function runLoad(baseUrl: string, request: LoadRequest, options: LoadOptions): Promise<LoadResult> {
  let counter = 0;
  const nextNumber = options.nextNumber ?? (() => (counter += 1));
  const parts = request.bodyParts;
  const check = request.failedAnswer;
  let failedAnswers = 0;
  const onResponse = check ? (status: number, body: string) => void (status < 300 && check(body) && (failedAnswers += 1)) : undefined;
  const started = performance.now();
  let finish!: (outcome: { error: unknown; result?: autocannon.Result }) => void;
  const finished = new Promise<{ error: unknown; result?: autocannon.Result }>((resolve) => (finish = resolve));
  const instance = autocannon(
    {
      url: new URL(request.path, baseUrl).href,
      method: request.method,
      headers: { ...(parts ? { 'content-type': 'application/json' } : {}), ...request.headers },
      connections: options.connections,
      ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.durationS }),
      ...(options.ratePerS !== undefined ? { overallRate: options.ratePerS } : {}),
      timeout: options.timeoutS,
      // A per-request setupRequest is rebuilt for every request; a top-level one only for the first.
      ...(parts && parts.length >= 2
        ? {
            requests: [
              {
                setupRequest: (each: autocannon.Request) => ({ ...each, body: parts.join(String(nextNumber())) }),
                ...(onResponse ? { onResponse } : {}),
              },
            ],
          }
        : onResponse
          ? { requests: [{ ...(parts ? { body: parts[0] } : {}), onResponse }] }
          : parts
            ? { body: parts[0] }
            : {}),
    },
    (error, result) => finish({ error, result }),
  );
  const showProgress = options.progress && process.stderr.isTTY === true;
  let done = 0;
  let lastResponseAt = 0;
  instance.on('response', () => {
    done += 1;
    lastResponseAt = performance.now();
  });
  const ticker = options.progress
    ? setInterval(() => {
        const elapsed = (performance.now() - started) / 1000;
        const total =
          options.amount !== undefined
            ? `${done}/${options.amount} requests`
            : `${elapsed.toFixed(0)}/${options.durationS} s, ${done} requests`;
        const line = `  ${options.label}: ${total}, ${(done / Math.max(elapsed, 1e-3)).toFixed(1)} req/s`;
        // On a terminal the line is rewritten in place; in a log, one line every few seconds.
        if (showProgress) process.stderr.write(`\r${line}\u001b[K`);
        else if (Math.round(elapsed) % 5 === 0) process.stderr.write(`${line}\n`);
      }, 1000)
    : undefined;
  const outcome = await finished;
  if (ticker) clearInterval(ticker);
  if (showProgress) process.stderr.write('\r\u001b[K');
  if (outcome.error || !outcome.result)
    throw wnwError('WNW_ERR_OP_INTERNAL', `load run against ${baseUrl} failed: ${String(outcome.error)}`, { cause: outcome.error });
  const result = outcome.result;
  // autocannon ends a run on its once-a-second tick: a run of `amount` requests lasts until its last answer, not until that tick.
  const seconds = ((options.amount !== undefined && lastResponseAt > 0 ? lastResponseAt : performance.now()) - started) / 1000;
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, (stats as { count: number }).count]),
  );
  // autocannon counts every request it sends (`requests.sent`), and each one ends as an answer (`requests.total`) or an error.
  const inFlight = Math.max(0, (result.requests.sent ?? result.requests.total) - result.requests.total - result.errors);
  return {
    connections: options.connections,
    duration_s: round(seconds, 2),
    requests: result.requests.total,
    requests_per_s: round(result.requests.total / seconds, 2),
    latency_ms: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: round(result.latency.mean, 2),
    },
    errors: result.errors,
    timeouts: result.timeouts,
    in_flight: inFlight,
    incomplete: inFlight > result.requests.total,
    non_2xx: result.non2xx,
    failed_answers: failedAnswers,
    status_codes: statusCodes,
  };
}

const round = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;
