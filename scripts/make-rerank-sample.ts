/**
 * Writes examples/rerank-sample: the demo task's four recorded trajectories replayed for real
 * (local sandboxes, verification on, exactly as `npm run demo` does), laid out as four SWE-bench
 * runs, each with its predictions file and its harness-style `results.json` (labels from the
 * candidate's own verification), plus the task record. `npm run rerank:sample` reranks them.
 *
 *   npx tsx scripts/make-rerank-sample.ts [--out examples/rerank-sample]
 *
 * Needs bubblewrap and python3 (the demo's requirements: scripts/ensure-system-deps.sh).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { prepareDemoRepo } from '../src/cli/demo-repo.js';
import { demoDir, demoRecordings, demoSolveBody, demoTask } from '../src/cli/demo-task.js';
import type { JobView } from '../src/cli/job-output.js';
import { createRuntime } from '../src/cli/runtime.js';
import { loadConfig } from '../src/config.js';
import { packageRoot } from '../src/util/package-root.js';

const { values: args } = parseArgs({ options: { out: { type: 'string', default: join(packageRoot(), 'examples', 'rerank-sample') } } });
const out = args.out!;
/** The demo task has no upstream repository; the report groups instances by this name. */
const REPO = 'winnower-demo/durations';

const recordings = demoRecordings();
const names = Object.keys(recordings);
const repo = prepareDemoRepo(join(demoDir(), 'repo'));
const config = loadConfig({
  overrides: { server: { port: 0, data_dir: join(dirname(repo), 'data'), api_keys: [], repo_roots: [dirname(repo)] }, log_level: 'warn' },
});
const runtime = await createRuntime(config, { logger: false });
try {
  const address = await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const body = demoSolveBody(
    repo,
    { verifyTimeoutS: 120, agent: { time_limit_s: 300 } },
    {
      n: names.length,
      policy: { kind: 'replay', recordings: names.map((name) => recordings[name]) },
    },
  );
  const posted = await request(`${address}/solve?wait=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const job = (await posted.body.json()) as JobView;
  if (posted.statusCode !== 200 || job.status !== 'succeeded')
    throw new Error(`POST /solve answered ${posted.statusCode}, job ${job.status}: ${JSON.stringify(job.error)}`);

  const task = demoTask();
  const id = task.instance_id;
  rmSync(join(out, 'runs'), { recursive: true, force: true });
  mkdirSync(join(out, 'runs'), { recursive: true });
  const record = {
    instance_id: id,
    repo: REPO,
    problem_statement: task.problem_statement,
    FAIL_TO_PASS: task.fail_to_pass,
    PASS_TO_PASS: task.pass_to_pass,
    test_patch: task.test_patch,
    test_command: task.test_command,
  };
  writeFileSync(join(out, 'tasks.jsonl'), `${JSON.stringify(record)}\n`);
  const summary: string[] = [];
  for (const candidate of job.candidates) {
    // Replay runs recording i for rollout i (round-robin), so the index names the run.
    const name = names[candidate.index % names.length]!;
    const patch = candidate.patch ?? '';
    const verdict = patch === '' ? 'empty' : (candidate.verify?.status ?? 'error');
    writeFileSync(
      join(out, 'runs', `${name}.jsonl`),
      `${JSON.stringify({ instance_id: id, model_name_or_path: name, model_patch: patch })}\n`,
    );
    // The SWE-bench harness's run report: an empty patch is not evaluated; any other verdict than resolved is unresolved.
    const report = {
      total_instances: 1,
      submitted_ids: [id],
      completed_ids: verdict === 'empty' ? [] : [id],
      resolved_ids: verdict === 'resolved' ? [id] : [],
      unresolved_ids: verdict === 'resolved' || verdict === 'empty' ? [] : [id],
      empty_patch_ids: verdict === 'empty' ? [id] : [],
      error_ids: [],
    };
    writeFileSync(join(out, 'runs', `${name}.results.json`), `${JSON.stringify(report, null, 2)}\n`);
    const tally = candidate.verify
      ? `F2P ${candidate.verify.fail_to_pass.passed}/${task.fail_to_pass.length}, P2P ${candidate.verify.pass_to_pass.passed}/${task.pass_to_pass.length}`
      : 'not verified';
    summary.push(`${name}: ${verdict} (${tally})`);
  }
  console.log(`wrote ${out}:\n  ${summary.join('\n  ')}`);
} finally {
  await runtime.close();
  rmSync(dirname(repo), { recursive: true, force: true });
}
