/** `/ui`: the jobs list, newest first, with the API's filters (status, kind) and paging. */
import type { DataSource, Json } from './api-client.js';
import { badge, duration, h, replaceChildren, statusBadges, time } from './dom.js';

const STATUSES = ['', 'queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted'];
const TERMINAL = ['succeeded', 'failed', 'cancelled', 'interrupted'];

export async function jobsPage(app: HTMLElement, source: DataSource): Promise<void> {
  const params = new URLSearchParams(location.search);
  const query = {
    status: params.get('status') ?? '',
    kind: params.get('kind') ?? '',
    cursor: params.get('cursor') ?? undefined,
    limit: 50,
  };
  const page = await source.listJobs(query);
  // While a listed job runs, the list is read again now and then (live only).
  if (source.mode === 'live' && page.jobs.some((job) => !TERMINAL.includes(String(job.status))))
    setTimeout(() => void jobsPage(app, source).catch(() => undefined), 3000);
  const go = (change: Record<string, string | undefined>) => {
    const next = new URLSearchParams();
    for (const [name, value] of Object.entries({ status: query.status, kind: query.kind, ...change })) if (value) next.set(name, value);
    location.search = next.toString();
  };
  const select = (name: 'status' | 'kind', options: string[]) =>
    h(
      'label',
      {},
      `${name} `,
      h(
        'select',
        { id: `filter-${name}`, onchange: (event: Event) => go({ [name]: (event.target as HTMLSelectElement).value, cursor: undefined }) },
        options.map((option) => h('option', { value: option, selected: option === query[name] }, option || 'any')),
      ),
    );
  replaceChildren(
    app,
    h(
      'header',
      { class: 'top' },
      h('h1', {}, 'winnower jobs'),
      source.mode === 'saved' ? h('span', { class: 'muted' }, 'saved run') : null,
    ),
    h('div', { class: 'filters' }, select('status', STATUSES), ' ', select('kind', ['', 'solve', 'rerank'])),
    page.jobs.length === 0
      ? h('p', { class: 'muted', id: 'no-jobs' }, 'No jobs.')
      : h(
          'table',
          { id: 'jobs', class: 'list' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['job', 'status', 'kind', 'task', 'N', 'policy / harness', 'strategy', 'chosen', 'resolved', 'duration', 'created'].map(
                (name) => h('th', {}, name),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            page.jobs.map((job) => jobRow(job, source)),
          ),
        ),
    h(
      'nav',
      { class: 'paging' },
      query.cursor ? h('a', { href: '?', id: 'first-page' }, '« first page') : null,
      page.next_cursor
        ? h(
            'a',
            {
              href: `?${new URLSearchParams({ ...(query.status ? { status: query.status } : {}), ...(query.kind ? { kind: query.kind } : {}), cursor: page.next_cursor })}`,
              id: 'next-page',
            },
            'next page »',
          )
        : null,
    ),
  );
}

function jobRow(job: Json, source: DataSource): HTMLElement {
  const id = String(job.job_id);
  const overview = (job.overview ?? {}) as Record<string, unknown>;
  const progress = (job.progress ?? {}) as Record<string, number>;
  const status = String(job.status);
  const took = TERMINAL.includes(status)
    ? Date.parse(String(job.updated_at)) - Date.parse(String(job.created_at))
    : Date.now() - Date.parse(String(job.created_at));
  const who = [overview.policy, overview.harness].filter((part) => typeof part === 'string').join(' / ');
  return h(
    'tr',
    { 'data-job': id },
    h('td', {}, h('a', { href: source.links.job(id) }, id)),
    h('td', {}, ...statusBadges(status, overview.outcome)),
    h('td', {}, String(job.kind ?? '')),
    h('td', {}, String(overview.instance_id ?? '—')),
    h('td', { class: 'num' }, String(overview.n ?? progress.rollouts_total ?? '—')),
    h('td', {}, who || '—'),
    h('td', {}, String(overview.strategy ?? '—')),
    h(
      'td',
      { class: 'num' },
      overview.chosen_index === null || overview.chosen_index === undefined
        ? '—'
        : h('a', { href: source.links.candidate(id, Number(overview.chosen_index)) }, String(overview.chosen_index)),
    ),
    h('td', {}, overview.resolved === null || overview.resolved === undefined ? '—' : badge(overview.resolved ? 'yes' : 'no')),
    h('td', { class: 'num' }, duration(took)),
    h('td', {}, time(job.created_at)),
  );
}
