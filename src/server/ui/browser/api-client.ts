/**
 * Where the pages get their data. Live: this server's API, with the API key (when one is needed)
 * in the Authorization header, never in a URL. Saved (`winnower inspect`): the data the page was
 * written with. Both give the same JobView shapes the API documents.
 */
import { storedKey } from './api-key.js';

export type Json = Record<string, unknown>;

export interface JobsQuery {
  status?: string;
  kind?: string;
  cursor?: string;
  limit?: number;
}

export interface JobEvent extends Json {
  type: string;
  seq?: number;
  time?: string;
}

export interface DataSource {
  mode: 'live' | 'saved';
  listJobs(query: JobsQuery): Promise<{ jobs: Json[]; next_cursor: string | null }>;
  job(id: string, withTrajectories: boolean): Promise<Json>;
  /** Live only: the job's events from the first (replayed) to the last; resolves when the job has ended. */
  follow?(id: string, onEvent: (event: JobEvent) => void, signal: AbortSignal): Promise<void>;
  cancel?(id: string): Promise<void>;
  purge?(id: string): Promise<void>;
  links: { list(): string; job(id: string): string; candidate(id: string, index: number): string };
}

/** An API error with its status, so a 401/403 can ask for the key again. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = storedKey();
  return { ...extra, ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

async function call(method: string, url: string): Promise<Response> {
  const response = await fetch(url, { method, headers: headers({ accept: 'application/json' }), credentials: 'omit', cache: 'no-store' });
  if (!response.ok) {
    let message = `${method} ${url} answered ${response.status}`;
    try {
      const body = (await response.json()) as { error?: { code?: string; message?: string } };
      if (body.error?.message) message = `${body.error.code ?? response.status}: ${body.error.message}`;
    } catch {
      // Not JSON: the status says enough.
    }
    throw new ApiError(response.status, message);
  }
  return response;
}

const enc = encodeURIComponent;

/** Reads `text/event-stream` from a fetch response (EventSource cannot send a header). */
async function readEvents(response: Response, onEvent: (event: JobEvent) => void): Promise<void> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue;
      try {
        onEvent(JSON.parse(data) as JobEvent);
      } catch {
        // A line that is not JSON is no event of ours.
      }
    }
  }
}

export function liveSource(): DataSource {
  return {
    mode: 'live',
    async listJobs(query) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
      return (await (await call('GET', `/jobs${params.size ? `?${params}` : ''}`)).json()) as { jobs: Json[]; next_cursor: string | null };
    },
    async job(id, withTrajectories) {
      return (await (await call('GET', `/jobs/${enc(id)}${withTrajectories ? '?trajectories=true' : ''}`)).json()) as Json;
    },
    async follow(id, onEvent, signal) {
      let last = -1;
      let finished = false;
      // Reconnects after a dropped stream, from the last event seen (Last-Event-ID).
      while (!finished && !signal.aborted) {
        let response: Response;
        try {
          response = await fetch(`/jobs/${enc(id)}/events`, {
            headers: headers({ accept: 'text/event-stream', ...(last >= 0 ? { 'last-event-id': String(last) } : {}) }),
            credentials: 'omit',
            cache: 'no-store',
            signal,
          });
        } catch {
          // The server is away (restarting, the network dropped): try again shortly.
          if (signal.aborted) return;
          await new Promise((resolve) => setTimeout(resolve, 2000));
          continue;
        }
        if (!response.ok) throw new ApiError(response.status, `GET /jobs/${id}/events answered ${response.status}`);
        try {
          await readEvents(response, (event) => {
            if (typeof event.seq === 'number') last = event.seq;
            if (event.type === 'job-finish') finished = true;
            onEvent(event);
          });
        } catch (error) {
          if (signal.aborted) return;
          void error;
        }
        if (!finished && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    },
    async cancel(id) {
      await call('DELETE', `/jobs/${enc(id)}`);
    },
    async purge(id) {
      await call('DELETE', `/jobs/${enc(id)}?purge=true`);
    },
    links: {
      list: () => '/ui',
      job: (id) => `/ui/jobs/${enc(id)}`,
      candidate: (id, index) => `/ui/jobs/${enc(id)}/candidates/${index}`,
    },
  };
}

/** What `winnower inspect` writes into each page (src/server/ui/saved-site.ts). */
export interface SavedData {
  page: 'jobs' | 'job' | 'candidate';
  /** From this page to the site's root folder: '', '../' or '../../../'. */
  root: string;
  jobs?: Json[];
  job?: Json;
  index?: number;
  /** Job id → file stem under jobs/. */
  files: Record<string, string>;
}

export function savedSource(data: SavedData): DataSource {
  const stem = (id: string) => data.files[id] ?? 'missing';
  return {
    mode: 'saved',
    async listJobs(query) {
      const jobs = (data.jobs ?? []).filter(
        (job) => (!query.status || job.status === query.status) && (!query.kind || job.kind === query.kind),
      );
      return { jobs, next_cursor: null };
    },
    async job() {
      if (!data.job) throw new ApiError(404, 'this page holds no job');
      return data.job;
    },
    links: {
      list: () => `${data.root}index.html`,
      job: (id) => `${data.root}jobs/${stem(id)}.html`,
      candidate: (id, index) => `${data.root}jobs/${stem(id)}/candidates/${index}.html`,
    },
  };
}
