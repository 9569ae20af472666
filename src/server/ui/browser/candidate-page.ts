/**
 * `/ui/jobs/:id/candidates/:index`: the trajectory step by step (reasoning, action, observation;
 * long outputs folded), the patch as a side-by-side diff, the tests with the log's tail, the score
 * and any other evidence the candidate carries.
 */
import type { DataSource, Json } from './api-client.js';
import { diffView } from './diff-view.js';
import { grid, longText, valueTree } from './generic-view.js';
import { badge, fixed, h, outcomeBadgeOf, replaceChildren, type Child } from './dom.js';

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const KNOWN = new Set([
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
]);

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'interrupted'];
const REFRESH_WHILE_RUNNING_MS = 3000;

export async function candidatePage(app: HTMLElement, source: DataSource, id: string, index: number): Promise<void> {
  const job = await source.job(id, true);
  // A rollout still running grows step by step: read it again until the job has ended.
  if (source.mode === 'live' && !TERMINAL.includes(String(job.status))) {
    setTimeout(() => void candidatePage(app, source, id, index).catch(() => undefined), REFRESH_WHILE_RUNNING_MS);
  }
  const candidates = (Array.isArray(job.candidates) ? job.candidates : []).filter(isRecord);
  const candidate = candidates.find((item) => item.index === index);
  const result = isRecord(job.result) ? job.result : null;
  const chosen = result && isRecord(result.chosen) ? result.chosen : null;
  const header = [
    h(
      'nav',
      { class: 'crumbs' },
      h('a', { href: source.links.list() }, 'jobs'),
      ' / ',
      h('a', { href: source.links.job(id), id: 'job-link' }, id),
      ' / ',
      `candidate ${index}`,
    ),
    h(
      'nav',
      { class: 'siblings' },
      candidates.some((item) => item.index === index - 1)
        ? h('a', { href: source.links.candidate(id, index - 1), id: 'previous' }, `« candidate ${index - 1}`)
        : null,
      ' ',
      candidates.some((item) => item.index === index + 1)
        ? h('a', { href: source.links.candidate(id, index + 1), id: 'next' }, `candidate ${index + 1} »`)
        : null,
    ),
  ];
  if (!candidate) {
    replaceChildren(app, ...header, h('p', { class: 'error' }, `job ${id} has no candidate ${index} (yet).`));
    return;
  }
  const trajectory = isRecord(candidate.trajectory) ? candidate.trajectory : null;
  const verify = isRecord(candidate.verify) ? candidate.verify : null;
  const score = isRecord(candidate.score) ? candidate.score : null;
  const extras = Object.entries(candidate).filter(([key, value]) => !KNOWN.has(key) && value !== null && value !== undefined);
  const summary: Array<[string, Child]> = [
    ['status', badge(String(candidate.status))],
    ['source', String(trajectory?.source ?? '—')],
    ['exit', `${String(candidate.exit ?? '—')}${trajectory?.exit_raw ? ` (${String(trajectory.exit_raw)})` : ''}`],
    ['steps', String(candidate.steps ?? '—')],
    ['value', fixed(candidate.value)],
    ['tests', verify ? outcomeBadgeOf(verify.status) : '—'],
    ['chosen', chosen && chosen.index === index ? h('span', { class: 'chosen-mark' }, '✔ chosen') : 'no'],
  ];
  if (isRecord(candidate.error))
    summary.push([
      'error',
      h('span', { class: 'error' }, `${String(candidate.error.code ?? '')}: ${String(candidate.error.message ?? '')}`),
    ]);
  replaceChildren(
    app,
    ...header,
    h('header', { class: 'top' }, h('h1', {}, `candidate ${index}`), h('span', { class: 'muted' }, String(candidate.trajectory_id ?? ''))),
    h(
      'table',
      { class: 'kv', id: 'candidate-summary' },
      summary.map(([name, value]) => h('tr', {}, h('th', {}, name), h('td', {}, value))),
    ),
    h(
      'section',
      {},
      h('h2', {}, 'Patch'),
      diffView(typeof candidate.patch === 'string' ? candidate.patch : (trajectory?.patch as string | undefined)),
    ),
    verify ? testsSection(verify) : null,
    score ? h('section', {}, h('h2', {}, 'Score'), valueTree(score)) : null,
    extras.length
      ? h(
          'section',
          { id: 'candidate-extra' },
          h('h2', {}, 'More evidence'),
          ...extras.map(([key, value]) =>
            h('div', {}, h('h3', {}, key), /matrix|grid/i.test(key) ? (grid(value) ?? valueTree(value)) : valueTree(value)),
          ),
        )
      : null,
    h(
      'section',
      {},
      h('h2', {}, 'Trajectory'),
      trajectory
        ? trajectoryView(trajectory)
        : h('p', { class: 'muted', id: 'trajectory' }, 'No trajectory (the rollout did not run, or it was not saved).'),
    ),
  );
}

function testsSection(verify: Json): HTMLElement {
  const tests = isRecord(verify.tests) ? Object.entries(verify.tests) : [];
  const tally = (name: string) => {
    const t = isRecord(verify[name]) ? (verify[name] as Json) : null;
    return t ? `${String(t.passed)} passed, ${String(t.failed)} failed, ${String(t.missing)} missing` : '—';
  };
  const known = new Set([
    'trajectory_id',
    'instance_id',
    'status',
    'tests',
    'fail_to_pass',
    'pass_to_pass',
    'log_tail',
    'resolved',
    'applied',
    'apply_error',
    'parser',
    'exit_code',
    'timed_out',
    'duration_ms',
    'error',
  ]);
  const extras = Object.entries(verify).filter(([key, value]) => !known.has(key) && value !== null && value !== undefined);
  return h(
    'section',
    { id: 'tests' },
    h('h2', {}, 'Tests'),
    h(
      'table',
      { class: 'kv' },
      [
        ['outcome', outcomeBadgeOf(verify.status)],
        ['FAIL_TO_PASS', tally('fail_to_pass')],
        ['PASS_TO_PASS', tally('pass_to_pass')],
        [
          'applied',
          verify.applied ? 'yes' : h('span', { class: 'error' }, `no${verify.apply_error ? `: ${String(verify.apply_error)}` : ''}`),
        ],
        ['exit code', String(verify.exit_code ?? '—')],
        ['parser', String(verify.parser ?? '—')],
        [
          'took',
          typeof verify.duration_ms === 'number'
            ? `${(verify.duration_ms / 1000).toFixed(1)} s${verify.timed_out ? ' (timed out)' : ''}`
            : '—',
        ],
        ...(verify.error ? [['error', String(verify.error)] as [string, Child]] : []),
        ...extras.map(([key, value]) => [key, valueTree(value)] as [string, Child]),
      ].map(([name, value]) => h('tr', {}, h('th', {}, name as string), h('td', {}, value as Child))),
    ),
    tests.length
      ? h(
          'details',
          { 'data-key': 'test-list', open: tests.length <= 30 },
          h('summary', {}, `${tests.length} tests`),
          h(
            'table',
            { class: 'list' },
            tests.map(([test, outcome]) => h('tr', {}, h('td', {}, h('code', {}, test)), h('td', {}, badge(String(outcome))))),
          ),
        )
      : null,
    h('h3', {}, 'Log tail'),
    typeof verify.log_tail === 'string' && verify.log_tail
      ? h('pre', { class: 'log', id: 'log-tail' }, verify.log_tail)
      : h('p', { class: 'muted' }, 'No log.'),
  );
}

interface Step {
  assistant: Json | null;
  observations: Json[];
}

/** Messages grouped as steps: an assistant turn and the tool results that answer it; what comes before the first is the prompt. */
function trajectoryView(trajectory: Json): HTMLElement {
  const messages = (Array.isArray(trajectory.messages) ? trajectory.messages : []).filter(isRecord);
  const prompt: Json[] = [];
  const steps: Step[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') steps.push({ assistant: message, observations: [] });
    else if (steps.length === 0) prompt.push(message);
    else steps.at(-1)!.observations.push(message);
  }
  const usage = isRecord(trajectory.usage) ? trajectory.usage : null;
  return h(
    'div',
    { id: 'trajectory', class: 'trajectory' },
    h(
      'p',
      { class: 'muted' },
      `${steps.length} steps · ${messages.length} messages${usage ? ` · ${String(usage.calls ?? 0)} policy calls, ${(Number(usage.prompt_tokens ?? 0) + Number(usage.completion_tokens ?? 0)).toLocaleString()} tokens` : ''}`,
    ),
    prompt.length
      ? h(
          'details',
          { class: 'prompt', 'data-key': 'prompt' },
          h('summary', {}, `Prompt (${prompt.map((message) => String(message.role)).join(', ')})`),
          prompt.map((message) => messageBlock(message, 'prompt')),
        )
      : null,
    h(
      'ol',
      { class: 'steps', start: 1 },
      steps.map((step, i) =>
        h(
          'li',
          { class: 'step', 'data-step': i + 1 },
          h('h3', {}, `Step ${i + 1}`),
          step.assistant ? actionBlock(step.assistant, i) : null,
          step.observations.map((message, j) => messageBlock(message, `obs-${i}-${j}`)),
        ),
      ),
    ),
    steps.length === 0 && messages.length === 0 ? h('p', { class: 'muted' }, 'A patch-only candidate: no messages.') : null,
  );
}

function actionBlock(message: Json, i: number): HTMLElement {
  const calls = (Array.isArray(message.tool_calls) ? message.tool_calls : []).filter(isRecord);
  return h(
    'div',
    { class: 'action' },
    typeof message.reasoning === 'string' && message.reasoning
      ? h('div', { class: 'reasoning' }, h('span', { class: 'role' }, 'reasoning'), longText(message.reasoning, `reasoning-${i}`, 6))
      : null,
    typeof message.content === 'string' && message.content
      ? h('div', { class: 'thought' }, h('span', { class: 'role' }, 'assistant'), longText(message.content, `content-${i}`, 16))
      : null,
    calls.map((call) => {
      const fn = isRecord(call.function) ? call.function : {};
      let args: unknown = fn.arguments;
      try {
        args = JSON.parse(String(fn.arguments));
      } catch {
        // Arguments that are not JSON are shown as given.
      }
      const command = isRecord(args) && typeof args.command === 'string' ? args.command : null;
      return h(
        'div',
        { class: 'call' },
        h('span', { class: 'role' }, `action: ${String(fn.name ?? 'call')}`),
        command !== null
          ? h('pre', { class: 'command' }, command)
          : isRecord(args)
            ? valueTree(args)
            : h('pre', { class: 'command' }, String(args ?? '')),
      );
    }),
  );
}

function messageBlock(message: Json, key: string): HTMLElement {
  const meta = isRecord(message.meta) ? message.meta : null;
  const exit =
    meta && (typeof meta.exit_code === 'number' || typeof meta.returncode === 'number')
      ? ` (exit ${String(meta.exit_code ?? meta.returncode)})`
      : '';
  const role = message.role === 'tool' ? `observation${exit}` : String(message.role);
  return h(
    'div',
    { class: `message role-${['system', 'user', 'assistant', 'tool'].includes(String(message.role)) ? String(message.role) : 'other'}` },
    h('span', { class: 'role' }, role),
    longText(String(message.content ?? ''), key, message.role === 'tool' ? 20 : 12),
  );
}
