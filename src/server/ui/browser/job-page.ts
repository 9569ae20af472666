/**
 * `/ui/jobs/:id`: one row per rollout (status, steps, tokens, elapsed), each candidate's value,
 * tests and whatever evidence the job holds, the selection and its reasons, the stop rule, any
 * matrix as a grid, and the events so far. Live: the job's event stream moves the rows at once,
 * and the job is read again after each burst of events (and every few seconds while it runs).
 */
import { ApiError, type DataSource, type JobEvent, type Json } from './api-client.js';
import { configLabel, configsByIndex, configTitle, policyLines, scoredByLabel, type RolloutConfig } from './candidate-config.js';
import { findMatrices, grid, valueTree } from './generic-view.js';
import { badge, duration, fixed, h, outcomeBadgeOf, replaceChildren, statusBadges, time, type Child } from './dom.js';
import { jobOutcome } from './job-outcome.js';

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'interrupted'];
/** Candidate fields this page draws by name; any other non-empty field is drawn generically. */
const KNOWN_CANDIDATE_FIELDS = new Set([
  'index',
  'status',
  'trajectory_id',
  'exit',
  'steps',
  'usage',
  'patch',
  'value',
  'score',
  'verify',
  'error',
  'trajectory',
  'source',
  'config',
  'resolved',
]);
const KNOWN_RESULT_FIELDS = new Set([
  'instance_id',
  'chosen',
  'selection',
  'candidates',
  'rollouts',
  'compute',
  'partial',
  'reason',
  'scored_by',
  'outcome',
]);
const REFRESH_WHILE_RUNNING_MS = 2000;

interface RolloutTimes {
  started?: string;
  finished?: string;
  status?: string;
}

interface State {
  job: Json;
  events: JobEvent[];
  rollouts: Map<number, RolloutTimes>;
  n: number;
  notice?: string;
  /** Purge was clicked once; the next click deletes (kept across redraws). */
  purgeArmed?: boolean;
}

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export async function jobPage(app: HTMLElement, source: DataSource, id: string): Promise<void> {
  const state: State = { job: await source.job(id, false), events: [], rollouts: new Map(), n: 0 };
  const draw = () => replaceChildren(app, ...render(state, source, id, actions));
  // Set once a purge is sent: no read of the job starts after it (its 404 would be a console error).
  let purging = false;
  const reload = async () => {
    if (purging) return;
    try {
      state.job = await source.job(id, false);
      draw();
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        state.notice = 'This job no longer exists (purged).';
        draw();
      }
    }
  };
  const actions = {
    cancel: async () => {
      await source.cancel?.(id);
      await reload();
    },
    purge: async () => {
      purging = true;
      try {
        await source.purge?.(id);
      } catch (error) {
        purging = false;
        throw error;
      }
      location.assign(source.links.list());
    },
    // Through state and a redraw, not the clicked element: a redraw may have detached it.
    armPurge: () => {
      state.purgeArmed = true;
      draw();
    },
  };
  draw();
  // Elapsed times of running rollouts tick without a reload.
  setInterval(() => {
    for (const cell of app.querySelectorAll<HTMLElement>('[data-since]'))
      cell.textContent = duration(Date.now() - Date.parse(cell.dataset.since!));
  }, 1000);
  if (!source.follow) return;
  // biome-ignore lint/correctness/noUnusedVariables: read and written by `??=` below (a false positive)
  let pending: ReturnType<typeof setTimeout> | undefined;
  const soon = () => {
    pending ??= setTimeout(() => {
      pending = undefined;
      void reload();
    }, 250);
  };
  const poll = setInterval(() => {
    if (TERMINAL.includes(String(state.job.status))) clearInterval(poll);
    else soon();
  }, REFRESH_WHILE_RUNNING_MS);
  const controller = new AbortController();
  addEventListener('pagehide', () => controller.abort());
  try {
    await source.follow(
      id,
      (event) => {
        state.events.push(event);
        applyEvent(state, event);
        draw();
        soon();
      },
      controller.signal,
    );
  } catch (error) {
    // The page stays; it still reads the job every few seconds while it runs.
    state.notice = `Live updates stopped: ${error instanceof Error ? error.message : String(error)}`;
    draw();
    return;
  }
  clearInterval(poll);
  await reload();
}

function applyEvent(state: State, event: JobEvent): void {
  const index = num(event.index);
  if (event.type === 'job-start') state.n = num(event.n) ?? state.n;
  if (index === null) return;
  const times = state.rollouts.get(index) ?? {};
  if (event.type === 'rollout-start') Object.assign(times, { started: event.time, status: 'running' });
  if (event.type === 'rollout-finish') Object.assign(times, { finished: event.time, status: String(event.status) });
  if (event.type === 'rollout-skip') Object.assign(times, { status: 'skipped' });
  state.rollouts.set(index, times);
}

interface Actions {
  cancel(): Promise<void>;
  purge(): Promise<void>;
  armPurge(): void;
}

function render(state: State, source: DataSource, id: string, actions: Actions): Child[] {
  const { job } = state;
  const status = String(job.status);
  const result = isRecord(job.result) ? job.result : null;
  const candidates = (Array.isArray(job.candidates) ? job.candidates : []).filter(isRecord);
  const selection = result && isRecord(result.selection) ? result.selection : null;
  const chosen = result && isRecord(result.chosen) ? result.chosen : null;
  const progress = isRecord(job.progress) ? job.progress : {};
  const n = Math.max(
    state.n,
    num(progress.rollouts_total) ?? 0,
    candidates.length,
    ...[...state.rollouts.keys()].map((index) => index + 1),
  );
  const byIndex = new Map(candidates.map((candidate) => [num(candidate.index) ?? -1, candidate]));
  const running = !TERMINAL.includes(status);
  const evidence = evidenceByIndex(result);
  const configs = configsByIndex(candidates, result, state.events);
  const columns = {
    source: [...configs.values()].some((entry) => entry.source !== null),
    config: [...configs.values()].some((entry) => entry.config !== null),
  };
  const isSolve = job.kind === 'solve';
  const took = (running ? Date.now() : Date.parse(String(job.updated_at))) - Date.parse(String(job.created_at));
  return [
    h('nav', { class: 'crumbs' }, h('a', { href: source.links.list() }, 'jobs'), ' / ', id),
    h(
      'header',
      { class: 'top' },
      h('h1', {}, `job ${id}`),
      ...statusBadges(status, jobOutcome(result), { status: 'job-status', outcome: 'job-outcome' }),
      h(
        'span',
        { class: 'muted' },
        `${String(job.kind ?? '')} · ${String(result?.instance_id ?? '')} · created ${time(job.created_at)}${isSolve ? ` · ${running ? 'running for' : 'took'} ${duration(took)}` : ''}`,
      ),
      h(
        'span',
        { class: 'actions' },
        source.cancel && running ? h('button', { id: 'cancel', onclick: () => void actions.cancel() }, 'Cancel') : null,
        source.purge && !running ? purgeButton(state, actions) : null,
      ),
    ),
    state.notice ? h('p', { class: 'notice', id: 'notice' }, state.notice) : null,
    isRecord(job.error) ? h('p', { class: 'error' }, `${String(job.error.code ?? '')}: ${String(job.error.message ?? '')}`) : null,
    h('section', {}, h('h2', {}, 'Outcome'), outcome(state, result, selection, chosen, source, id, configs)),
    h(
      'section',
      {},
      h('h2', {}, `Rollouts (${n})`),
      h(
        'table',
        { id: 'rollouts', class: 'list' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            [
              '#',
              ...(columns.source ? ['source'] : []),
              ...(columns.config ? ['configuration'] : []),
              'status',
              'steps',
              'tokens',
              'elapsed',
              'exit',
              'patch',
              'value',
              'tests',
              'F2P',
              'P2P',
              'evidence',
              '',
            ].map((name) => h('th', {}, name)),
          ),
        ),
        h(
          'tbody',
          {},
          Array.from({ length: n }, (_, index) =>
            rolloutRow(
              index,
              byIndex.get(index),
              state.rollouts.get(index),
              chosen,
              source,
              id,
              evidence.get(index),
              columns,
              configs.get(index),
            ),
          ),
        ),
      ),
    ),
    selection ? rankingSection(selection, candidates, source, id) : null,
    ...matricesOf(result, state.events).map(({ path, value }) =>
      h('section', { class: 'matrix' }, h('h2', {}, `Matrix: ${path}`), grid(value, 'candidate') ?? valueTree(value)),
    ),
    extraResultFields(result),
    h(
      'details',
      { class: 'events', 'data-key': 'events' },
      h('summary', {}, `Events (${state.events.length})`),
      h(
        'ol',
        { id: 'events', start: 0 },
        state.events
          .slice(-200)
          .map((event) =>
            h('li', {}, h('code', {}, String(event.type)), ' ', h('span', { class: 'muted' }, time(event.time)), ' ', eventText(event)),
          ),
      ),
    ),
  ];
}

/** The result's matrices; while the job runs, the cells its events have reported so far. */
function matricesOf(result: Json | null, events: JobEvent[]): Array<{ path: string; value: unknown }> {
  const found = findMatrices(result ?? {});
  const cells = events.flatMap((event) => (isRecord(event.cell) ? [event.cell] : []));
  return found.length || cells.length === 0 ? found : [{ path: 'cells so far (events)', value: cells }];
}

function purgeButton(state: State, actions: Actions): HTMLElement {
  // Two clicks, no dialog: the first arms the button.
  const button = h(
    'button',
    { id: 'purge', class: 'danger' },
    state.purgeArmed ? 'Purge: click again to delete this job' : 'Purge',
  ) as HTMLButtonElement;
  button.addEventListener('click', () => {
    if (state.purgeArmed) void actions.purge();
    else actions.armPurge();
  });
  return button;
}

function outcome(
  state: State,
  result: Json | null,
  selection: Json | null,
  chosen: Json | null,
  source: DataSource,
  id: string,
  configs: Map<number, RolloutConfig>,
): Child {
  const stops = state.events.filter((event) => event.type === 'stop-rule');
  const picked = state.events.find((event) => event.type === 'selection');
  const rows: Array<[string, Child]> = [];
  if (chosen)
    rows.push([
      'chosen',
      h(
        'span',
        { id: 'chosen' },
        h('a', { href: source.links.candidate(id, Number(chosen.index)) }, `candidate ${String(chosen.index)}`),
        ` · value ${fixed(chosen.value)} · tests ${String(chosen.verify_status ?? '—')}`,
      ),
    ]);
  else if (result)
    rows.push([
      'chosen',
      h('span', { id: 'chosen' }, jobOutcome(result) === 'none-usable' ? 'none: no candidate had a usable patch' : 'none'),
    ]);
  if (selection) {
    rows.push([
      'strategy',
      `${String(selection.strategy ?? '—')}${selection.degraded_to ? ` (degraded to ${String(selection.degraded_to)})` : ''}`,
    ]);
    rows.push(['why', String(selection.reason ?? '—')]);
  } else if (picked) rows.push(['why', String(picked.reason ?? '')]);
  if (result?.reason) rows.push(['note', String(result.reason)]);
  const scoredBy = scoredByLabel(result?.scored_by);
  if (scoredBy)
    rows.push([
      'scored by',
      h('details', { id: 'scored-by', 'data-key': 'scored-by' }, h('summary', {}, scoredBy), valueTree(result!.scored_by)),
    ]);
  const policies = policyLines(state.events, configs);
  if (policies.lines.length)
    rows.push([
      policies.name,
      h(
        'ul',
        { id: 'policies' },
        policies.lines.map((line) => h('li', {}, line)),
      ),
    ]);
  if (result?.partial) rows.push(['partial', 'the job was interrupted: the choice is the best of the candidates that had finished']);
  if (state.job.kind === 'solve')
    rows.push([
      'stop rule',
      stops.length ? stops.map((event) => `candidate ${String(event.index)}: ${String(event.reason)}`).join('; ') : 'not met (or not set)',
    ]);
  if (result && isRecord(result.rollouts))
    rows.push([
      'rollouts',
      Object.entries(result.rollouts)
        .map(([name, count]) => `${name} ${String(count)}`)
        .join(', '),
    ]);
  if (result && isRecord(result.compute)) rows.push(['compute', valueTree(result.compute)]);
  if (!result) rows.push(['result', state.job.status === 'running' || state.job.status === 'queued' ? 'not yet' : 'none']);
  return h(
    'table',
    { class: 'kv' },
    rows.map(([name, value]) => h('tr', {}, h('th', {}, name), h('td', {}, value))),
  );
}

function rolloutRow(
  index: number,
  candidate: Json | undefined,
  times: RolloutTimes | undefined,
  chosen: Json | null,
  source: DataSource,
  id: string,
  elsewhere: Json | undefined,
  columns: { source: boolean; config: boolean },
  configured: RolloutConfig | undefined,
): HTMLElement {
  // The stored status once the job was read after the event; the event's until then.
  const stored = candidate ? String(candidate.status) : 'pending';
  const status = times?.status && (stored === 'pending' || (stored === 'running' && times.status !== 'running')) ? times.status : stored;
  const usage = candidate && isRecord(candidate.usage) ? candidate.usage : null;
  const tokens = usage ? (num(usage.prompt_tokens) ?? 0) + (num(usage.completion_tokens) ?? 0) : null;
  const verify = candidate && isRecord(candidate.verify) ? candidate.verify : null;
  const tally = (value: unknown) =>
    isRecord(value) ? `${String(value.passed)}/${(num(value.passed) ?? 0) + (num(value.failed) ?? 0) + (num(value.missing) ?? 0)}` : '—';
  const elapsed: Child =
    times?.started && (times.finished || status !== 'running')
      ? duration(Date.parse(times.finished ?? times.started) - Date.parse(times.started))
      : times?.started
        ? h('span', { 'data-since': times.started }, duration(Date.now() - Date.parse(times.started)))
        : '—';
  const patch = typeof candidate?.patch === 'string' ? candidate.patch : null;
  const value = num(candidate?.value);
  const extras = [
    ...(candidate
      ? Object.entries(candidate).filter(
          ([key, item]) =>
            !KNOWN_CANDIDATE_FIELDS.has(key) && item !== null && item !== undefined && !(Array.isArray(item) && item.length === 0),
        )
      : []),
    ...Object.entries(elsewhere ?? {}),
  ];
  const isChosen = chosen !== null && num(chosen.index) === index;
  return h(
    'tr',
    { 'data-index': index, 'data-status': status, class: isChosen ? 'chosen' : null },
    h('td', {}, h('a', { href: source.links.candidate(id, index) }, String(index))),
    columns.source ? h('td', { class: 'source' }, configured?.source ?? '—') : null,
    columns.config
      ? h('td', { class: 'config', title: configured ? configTitle(configured) : null }, configLabel(configured?.config ?? null) || '—')
      : null,
    h('td', { class: 'status' }, badge(status), status === 'running' ? h('span', { class: 'spinner', title: 'running' }) : null),
    h('td', { class: 'num steps' }, candidate?.steps === null || candidate?.steps === undefined ? '—' : String(candidate.steps)),
    h('td', { class: 'num' }, tokens === null ? '—' : tokens.toLocaleString()),
    h('td', { class: 'num' }, elapsed),
    h('td', {}, String(candidate?.exit ?? '—')),
    h(
      'td',
      { class: 'num' },
      patch === null ? '—' : patch === '' ? 'empty' : `${patch.split('\n').filter((line) => /^[+-](?![+-]{2} )/.test(line)).length} lines`,
    ),
    h(
      'td',
      { class: 'num' },
      value === null ? '—' : h('span', { class: 'value' }, h('meter', { min: 0, max: 1, value }), ` ${fixed(value)}`),
    ),
    // Without a test run here, a label given to the run (rerank --labels) stands in, marked as such.
    h(
      'td',
      {},
      verify
        ? outcomeBadgeOf(verify.status)
        : typeof candidate?.resolved === 'boolean'
          ? [badge(candidate.resolved ? 'resolved' : 'unresolved'), h('span', { class: 'muted' }, ' label')]
          : '—',
    ),
    h('td', { class: 'num' }, verify ? tally(verify.fail_to_pass) : '—'),
    h('td', { class: 'num' }, verify ? tally(verify.pass_to_pass) : '—'),
    h(
      'td',
      { class: 'evidence' },
      extras.length
        ? h(
            'details',
            { 'data-key': `extra-${index}` },
            h('summary', {}, extras.map(([key, item]) => evidenceLabel(key, item)).join(', ')),
            valueTree(Object.fromEntries(extras)),
          )
        : candidate?.error && isRecord(candidate.error)
          ? h('span', { class: 'error' }, String(candidate.error.message ?? ''))
          : '',
    ),
    h('td', {}, isChosen ? h('span', { class: 'chosen-mark', title: 'chosen' }, '✔ chosen') : ''),
  );
}

/**
 * Per-candidate evidence kept elsewhere in the result (e.g. `checks.regression.candidates[i]`):
 * any list of objects with an `index` is spread over the rows it names, by its path.
 */
function evidenceByIndex(result: Json | null): Map<number, Json> {
  const out = new Map<number, Json>();
  const walk = (value: unknown, path: string, depth: number) => {
    if (depth > 4 || !isRecord(value)) return;
    for (const [key, item] of Object.entries(value)) {
      // Known fields are drawn by name, matrices as grids.
      if ((depth === 0 && KNOWN_RESULT_FIELDS.has(key)) || /matrix|grid/i.test(key)) continue;
      const here = path ? `${path}.${key}` : key;
      if (Array.isArray(item) && item.length && item.every((entry) => isRecord(entry) && Number.isInteger(entry.index))) {
        for (const entry of item as Json[]) {
          const { index, trajectory_id: _id, ...rest } = entry;
          const row = out.get(index as number) ?? {};
          // Several entries for one candidate under one path become a list.
          row[here] = here in row ? [...(Array.isArray(row[here]) ? (row[here] as unknown[]) : [row[here]]), rest] : rest;
          out.set(index as number, row);
        }
      } else walk(item, here, depth + 1);
    }
  };
  walk(result, '', 0);
  return out;
}

/** `checks.regression.candidates` with 2 regressions → `regression: 2 broken`; otherwise the field's own name. */
function evidenceLabel(key: string, value: unknown): string {
  const name =
    key
      .split('.')
      .filter((part) => part !== 'candidates' && part !== 'checks')
      .at(-1) ?? key;
  if (isRecord(value) && Array.isArray(value.regressions)) return `${name}: ${regressionWords(value)}`;
  return name;
}

/** A regression check's outcome in words: one that compared nothing never reads "none broken" (docs/checks.md). */
function regressionWords(value: Json): string {
  const regressions = value.regressions as unknown[];
  const removed = Array.isArray(value.removed) ? value.removed.length : 0;
  const status = typeof value.status === 'string' ? value.status : 'checked';
  if (status === 'not_compared') return 'compared nothing';
  if (status === 'apply_failed') return 'patch did not apply';
  if (status === 'error') return 'could not run';
  const broken = regressions.length ? `${regressions.length} broken` : 'none broken';
  return removed ? `${broken}, ${removed} removed by the patch` : broken;
}

/** A ranking row's tamper flags as amber badges, the file and what the patch did in each title. */
function tamperBadges(flags: unknown): HTMLElement | string {
  const list = Array.isArray(flags) ? flags.filter(isRecord) : [];
  if (list.length === 0) return '—';
  return h(
    'span',
    { class: 'flags' },
    ...list.map((flag) =>
      h(
        'span',
        { class: 'badge badge-warn', title: `${String(flag.file ?? '')}: ${String(flag.detail ?? '')}` },
        `${String(flag.kind ?? '')} ${String(flag.file ?? '')}`,
      ),
    ),
  );
}

function rankingSection(selection: Json, candidates: Json[], source: DataSource, id: string): HTMLElement {
  const ranking = (Array.isArray(selection.ranking) ? selection.ranking : []).filter(isRecord);
  const indexOf = new Map(candidates.map((candidate) => [String(candidate.trajectory_id), num(candidate.index)]));
  const known = new Set(['trajectory_id', 'rank', 'value', 'verified', 'cluster', 'cluster_size', 'key', 'reasons', 'tamper']);
  // A flags column only when some candidate was flagged: most jobs have none.
  const flagged = ranking.some((row) => Array.isArray(row.tamper) && row.tamper.length > 0);
  return h(
    'section',
    {},
    h('h2', {}, "Selector's ranking"),
    h(
      'table',
      { id: 'ranking', class: 'list' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['rank', 'candidate', 'value', 'tests', ...(flagged ? ['tamper flags'] : []), 'cluster', 'key', 'reasons', 'signals'].map(
            (name) => h('th', {}, name),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        ranking.map((row) => {
          const index = indexOf.get(String(row.trajectory_id));
          const extras = Object.entries(row).filter(([key]) => !known.has(key));
          return h(
            'tr',
            {},
            h('td', { class: 'num' }, String(row.rank)),
            h(
              'td',
              {},
              index === null || index === undefined
                ? String(row.trajectory_id)
                : h(
                    'a',
                    { href: source.links.candidate(id, index) },
                    `${index} `,
                    h('span', { class: 'muted' }, String(row.trajectory_id)),
                  ),
            ),
            h('td', { class: 'num' }, fixed(row.value)),
            h('td', {}, typeof row.verified === 'string' ? outcomeBadgeOf(row.verified) : '—'),
            flagged ? h('td', { class: 'tamper' }, tamperBadges(row.tamper)) : null,
            h(
              'td',
              {},
              row.cluster === null || row.cluster === undefined ? '—' : `${String(row.cluster)} (×${String(row.cluster_size ?? 1)})`,
            ),
            h('td', { class: 'num' }, Array.isArray(row.key) ? row.key.map((part) => fixed(part)).join(', ') : '—'),
            h(
              'td',
              {},
              Array.isArray(row.reasons)
                ? h(
                    'ul',
                    {},
                    row.reasons.map((reason) => h('li', {}, String(reason))),
                  )
                : '—',
            ),
            h('td', {}, extras.length ? valueTree(Object.fromEntries(extras)) : ''),
          );
        }),
      ),
    ),
  );
}

function extraResultFields(result: Json | null): HTMLElement | null {
  if (!result) return null;
  const extras = Object.entries(result).filter(
    ([key, value]) => !KNOWN_RESULT_FIELDS.has(key) && !/matrix|grid/i.test(key) && value !== null && value !== undefined,
  );
  if (extras.length === 0) return null;
  return h('section', { id: 'result-extra' }, h('h2', {}, 'More evidence'), valueTree(Object.fromEntries(extras)));
}

function eventText(event: JobEvent): string {
  const { type: _type, seq: _seq, time: _time, ...rest } = event;
  return Object.entries(rest)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ')
    .slice(0, 400);
}
