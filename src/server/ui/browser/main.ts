/**
 * The inspector's entry point: reads what the page is (live on the server, or saved by
 * `winnower inspect`), asks for the API key first when the server wants one, then draws the page.
 */
import { ApiError, liveSource, savedSource, type DataSource, type SavedData } from './api-client.js';
import { forgetKey, keyForm, storedKey } from './api-key.js';
import { candidatePage } from './candidate-page.js';
import { h, replaceChildren } from './dom.js';
import { jobPage } from './job-page.js';
import { jobsPage } from './jobs-page.js';

type Route = { page: 'jobs' } | { page: 'job'; id: string } | { page: 'candidate'; id: string; index: number };

function liveRoute(path: string): Route {
  const match = /^\/ui\/jobs\/([^/]+)(?:\/candidates\/(\d+))?\/?$/.exec(path);
  if (!match) return { page: 'jobs' };
  const id = decodeURIComponent(match[1]!);
  return match[2] === undefined ? { page: 'job', id } : { page: 'candidate', id, index: Number(match[2]) };
}

function savedRoute(data: SavedData): Route {
  const id = typeof data.job?.job_id === 'string' ? data.job.job_id : '';
  if (data.page === 'job') return { page: 'job', id };
  if (data.page === 'candidate') return { page: 'candidate', id, index: data.index ?? 0 };
  return { page: 'jobs' };
}

async function show(app: HTMLElement, source: DataSource, route: Route): Promise<void> {
  document.title =
    route.page === 'jobs'
      ? 'winnower jobs'
      : route.page === 'job'
        ? `job ${route.id} · winnower`
        : `candidate ${route.index} of ${route.id} · winnower`;
  if (route.page === 'jobs') await jobsPage(app, source);
  else if (route.page === 'job') await jobPage(app, source, route.id);
  else await candidatePage(app, source, route.id, route.index);
}

async function start(): Promise<void> {
  const app = document.getElementById('app')!;
  const body = document.body;
  const savedBlock = document.getElementById('winnower-data');
  if (body.dataset.mode === 'saved' && savedBlock) {
    const data = JSON.parse(savedBlock.textContent ?? '{}') as SavedData;
    await show(app, savedSource(data), savedRoute(data));
    return;
  }
  const source = liveSource();
  const route = liveRoute(location.pathname);
  const keyRequired = body.dataset.keyRequired === 'true';
  const run = async (): Promise<void> => {
    if (keyRequired && !storedKey()) {
      replaceChildren(
        app,
        keyForm('This server needs an API key.', () => void run()),
      );
      return;
    }
    try {
      await show(app, source, route);
      // Outside #app, which each page redraws.
      if (keyRequired && !document.getElementById('forget-key'))
        app.before(
          h(
            'p',
            { class: 'key-note' },
            h(
              'button',
              {
                id: 'forget-key',
                onclick: () => {
                  forgetKey();
                  location.reload();
                },
              },
              'Forget the API key',
            ),
          ),
        );
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        forgetKey();
        replaceChildren(
          app,
          keyForm(error.status === 401 ? 'This server needs an API key.' : 'That key was not accepted; try another.', () => void run()),
        );
        return;
      }
      throw error;
    }
  };
  await run();
}

start().catch((error: unknown) => {
  const app = document.getElementById('app');
  if (app) replaceChildren(app, h('p', { class: 'error', id: 'page-error' }, error instanceof Error ? error.message : String(error)));
});
