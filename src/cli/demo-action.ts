/** What `winnower demo` does once its flags are parsed; loaded only when it runs (demo.ts registers it). */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { createHarnessCatalog } from '../rollout/harness/harness-catalog.js';
import { BUILTIN_HARNESS } from '../rollout/harness/harness-definition.js';
import { loadConfig } from '../config.js';
import { prepareDemoRepo } from './demo-repo.js';
import { demoDir, demoHarnessRecordings, demoRecordings, demoSolveBody } from './demo-task.js';
import { formatEvent, renderCandidates, renderChecks, renderOutcome, type JobView } from './job-output.js';
import { SOLVE_EXIT_NONE_USABLE } from './option-values.js';
import { createRuntime } from './runtime.js';
import { sandboxLimitsLine } from './sandbox-limits-line.js';
import type { DemoFlags } from './demo.js';

async function followEvents(url: string, onEvent: (type: string, data: Record<string, unknown>) => void): Promise<void> {
  const response = await request(url, { headers: { accept: 'text/event-stream' } });
  let buffer = '';
  for await (const chunk of response.body) {
    buffer += chunk.toString();
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const type = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (type && data) onEvent(type, JSON.parse(data) as Record<string, unknown>);
    }
  }
}

/** Whether the harness can run here; if not, says why and how to install it. */
function harnessReady(name: string): boolean {
  const harnesses = createHarnessCatalog().list();
  const status = harnesses.find((harness) => harness.name === name);
  if (!status) {
    console.error(`winnower demo: no harness "${name}"; known: ${harnesses.map((harness) => harness.name).join(', ')}`);
    return false;
  }
  if (!status.available) {
    console.error(
      `winnower demo: ${status.reason}.\n  Install it with:  node bin/winnower.js harness install ${name}\n  then run:         npm run demo -- --harness ${name}`,
    );
    return false;
  }
  return true;
}

export async function runDemo(flags: DemoFlags): Promise<void> {
  const started = Date.now();
  const harness = flags.harness && flags.harness !== BUILTIN_HARNESS ? flags.harness : undefined;
  if (harness && !harnessReady(harness)) {
    process.exitCode = 1;
    return;
  }
  const recordings = Object.values(harness ? demoHarnessRecordings(harness) : demoRecordings());
  const repo = prepareDemoRepo(join(demoDir(), 'repo'));
  const dataDir = join(dirname(repo), 'data');
  // The demo's own server: no keys, and its temporary repository allowed whatever WINNOWER_REPO_ROOTS says.
  const config = loadConfig({
    overrides: { server: { port: 0, data_dir: dataDir, api_keys: [], repo_roots: [dirname(repo)] }, log_level: 'warn' },
  });
  const realPolicy = Boolean(config.policy.url);
  if (!realPolicy && recordings.length === 0) {
    console.error(
      `winnower demo: there are no recorded answers for harness ${harness} (examples/demo/harnesses); set WINNOWER_POLICY_URL to run it on a real policy, or try --harness pi`,
    );
    process.exitCode = 1;
    return;
  }
  const n = flags.n ?? (realPolicy ? 4 : recordings.length);

  console.log('winnower demo: best-of-N on the sample task "durations-1" (examples/demo)');
  console.log(
    `  policy:  ${realPolicy ? `${config.policy.model ?? 'default'} at ${config.policy.url}` : `replay of ${recordings.length} recorded trajectories, commands re-run for real`}`,
  );
  if (harness) console.log(`  agent:   the ${harness} CLI in each sandbox, its model calls answered through winnower's recording proxy`);
  const runtime = await createRuntime(config, { logger: { level: 'warn' } });
  try {
    const description = await runtime.sandboxes.describe();
    const limits = description.limits === undefined ? undefined : sandboxLimitsLine(description.limits);
    console.log(`  sandbox: ${runtime.sandboxes.name}${description.isolation ? ` — ${String(description.isolation)}` : ''}`);
    if (description.workspace || limits)
      console.log(`           workspaces: ${String(description.workspace ?? '?')}; limits: ${limits ?? 'none'}`);
    console.log(`  scorer:  ${runtime.valueModel.current.scorer.backend} ${runtime.valueModel.current.scorer.model}`);
    const address = await runtime.app.listen({ host: '127.0.0.1', port: 0 });
    const givenTests = flags.givenTests !== false;
    const writers = Object.values(demoRecordings(join(demoDir(), 'test-writers')));
    const noTestList = {
      // No FAIL_TO_PASS/PASS_TO_PASS, no test command: the suite is found, the tests are written.
      verify: {
        enabled: true,
        timeout_s: 60,
        reproduction: { n: 3, budget_s: 120, timeout_s: 60, ...(realPolicy ? {} : { policy: { kind: 'replay', recordings: writers } }) },
      },
    };
    const body = demoSolveBody(
      repo,
      { verifyTimeoutS: 60, agent: { time_limit_s: 120, ...(harness ? { harness } : {}) } },
      {
        n,
        ...(givenTests ? {} : noTestList),
        ...(realPolicy ? {} : { policy: { kind: 'replay', recordings } }),
        ...(flags.stopRule
          ? {
              stop_rule: { min_value: 0, require_resolved: true },
              waves: Array.from({ length: Math.ceil(n / 2) }, (_, i) => Math.min(2, n - 2 * i)),
            }
          : {}),
      },
    );
    const posted = await request(`${address}/solve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await posted.body.json()) as { job_id?: string; error?: { message: string } };
    if (posted.statusCode !== 202 || !answer.job_id) {
      console.error(`winnower demo: POST /solve answered ${posted.statusCode}: ${answer.error?.message ?? ''}`);
      process.exitCode = 1;
      return;
    }
    console.log(
      `\nPOST /solve → job ${answer.job_id} (n=${n}, ${givenTests ? "verification on, with the task's test list" : 'no test list: regression check and 3 reproduction tests'})\n`,
    );

    await followEvents(`${address}/jobs/${answer.job_id}/events`, (type, data) => {
      const line = formatEvent(type, data);
      if (line) console.log(`${`${((Date.now() - started) / 1000).toFixed(1)}s`.padStart(6)}  ${line}`);
    });

    const jobResponse = await request(`${address}/jobs/${answer.job_id}`);
    const job = (await jobResponse.body.json()) as JobView;
    if (job.status !== 'succeeded' || !job.result) {
      // The reason, not a stack trace: the job's own outcome says what went wrong.
      console.error(`\nwinnower demo: ${renderOutcome(job)}`);
      process.exitCode = 1;
      return;
    }
    console.log(
      '\n' +
        renderCandidates(job, realPolicy ? 'status' : 'recording', (c) =>
          realPolicy
            ? c.status
            : recordings[c.index % recordings.length]!.source.replace(/^recorded-/, '') + (c.status === 'finished' ? '' : ` (${c.status})`),
        ),
    );
    const checks = renderChecks(job, (c) =>
      realPolicy ? c.status : recordings[c.index % recordings.length]!.source.replace(/^recorded-/, ''),
    );
    if (checks) console.log(`\n${checks}`);
    console.log(`\n${renderOutcome(job)}`);
    console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // Ran to its end with nothing usable to show: as `winnower solve` does, not the 0 of a chosen patch.
    if (job.result.outcome === 'none-usable') process.exitCode = SOLVE_EXIT_NONE_USABLE;
  } finally {
    await runtime.close();
    if (!flags.keep) rmSync(dirname(repo), { recursive: true, force: true });
    else console.log(`kept ${dirname(repo)}`);
  }
}
