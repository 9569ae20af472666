/**
 * `winnower train --from-store` on a job store filled by real /solve jobs (local sandboxes, the
 * bundled ONNX scorer, real verification, a fake OpenAI-compatible policy with scripted fixes).
 */
import { join } from 'node:path';
import { validateAtif } from '../../src/formats/atif/index.js';
import { importTrajectories } from '../../src/formats/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/train/dataset.js';
import { labelledFromStore } from '../../src/train/store-rows.js';
import { readJsonl, runCli } from '../support/cli.js';
import { train } from '../../src/train/train.js';
import { startFakePolicy, type FakePolicyServer } from '../fakes/fake-policy.js';
import { commandsOf, createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from '../solve/helpers.js';

const recordings = demoRecordings();
const correct = commandsOf(recordings['correct-fix']!);
const wrong = commandsOf(recordings['plausible-wrong-fix']!);
const givesUp = commandsOf(recordings['gives-up']!);
const INSTANCES = ['acme__demo-1', 'acme__demo-2', 'acme__demo-3', 'acme__demo-4'];

describe.skipIf(!hasBubblewrap())('train --from-store on a store filled by real /solve jobs', () => {
  let world: TestWorld;
  let policy: FakePolicyServer;

  beforeAll(async () => {
    world = await createWorld();
    policy = await startFakePolicy({ scripts: { mixed: [{ commands: wrong }, { commands: correct }, { commands: givesUp }] } });
    const server = await world.start();
    try {
      for (const instance_id of INSTANCES) {
        const response = await server.app.inject({
          method: 'POST',
          url: '/solve?wait=true',
          payload: solveBody(world.repo, { instance_id, n: 3, policy: { kind: 'openai', url: policy.url, model: 'mixed' } }),
        });
        expect(response.json().status).toBe('succeeded');
      }
    } finally {
      await server.close();
    }
  }, 600_000);

  afterAll(async () => {
    await policy?.close();
    await world?.close();
  });

  it('reads every verified candidate as a labelled row (resolved or not), one pool per job, the job issue as task', async () => {
    const rows = await labelledFromStore(world.dataDir);
    // Per job: the wrong fix (unresolved) and the correct fix (resolved); "gives up" made no patch and was not verified.
    expect(rows).toHaveLength(2 * INSTANCES.length);
    expect(new Set(rows.map((row) => row.pool)).size).toBe(INSTANCES.length);
    expect(rows.filter((row) => row.resolved)).toHaveLength(INSTANCES.length);
    expect(rows.every((row) => row.task.problem_statement.length > 0 && row.trajectory.messages.length > 0)).toBe(true);
    expect(new Set(rows.map((row) => row.trajectory.id)).size).toBe(rows.length);
    // Each row says which model and selector scored its job (the job result's scored_by).
    for (const row of rows)
      expect(row.trajectory.meta.scored_by).toMatchObject({
        model: { name: 'winnower-value', hash: expect.stringMatching(/^sha256:/) },
        selector: { hash: expect.stringMatching(/^sha256:/) },
      });
  });

  it('trains a model folder from them', async () => {
    const result = await train({
      rollouts: [],
      fromStore: world.dataDir,
      out: join(world.dataDir, 'model'),
      folds: 2,
      validationFraction: 0.01,
      sourceCheck: 'none',
      baselineModel: null,
      vocabSize: 500,
      bigramBuckets: 1024,
      dims: 4,
      hidden: 4,
      maxEpochs: 2,
      budgetTokens: 1024,
      bootstrap: 20,
    });
    expect(result.trainCandidates + result.validationCandidates).toBe(2 * INSTANCES.length);
    expect(result.selector.priors?.overall).toBeCloseTo(0.5, 9);
    // The job rows carry their trajectories: the trajectory weights are fitted from the training side's pools with both outcomes (issue 19 item 5).
    const trajectory = result.selector.trajectory!;
    expect(trajectory.pools).toBeGreaterThan(0);
    expect(trajectory.rows).toBe(2 * trajectory.pools);
    expect(trajectory.reason).toMatch(/unchecked/);
  }, 300_000);

  it('winnower jobs export --labelled writes them as rows train reads, labels and tasks included', async () => {
    const out = join(world.dataDir, 'labelled.jsonl');
    const run = await runCli(['jobs', 'export', '--labelled', '--data-dir', world.dataDir, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const dataset = await loadDataset({ rollouts: [out], tasks: [`${out}.tasks.jsonl`] });
    expect(dataset.candidates).toHaveLength(2 * INSTANCES.length);
    expect(dataset.candidates.filter((c) => c.resolved)).toHaveLength(INSTANCES.length);
    expect(dataset.dropped.no_task).toBe(0);
    expect(dataset.candidates.every((c) => c.task.problem_statement.length > 0)).toBe(true);
  }, 120_000);

  it('winnower jobs export without --data-dir reads the configured store, as serve and solve would; both flags are refused', async () => {
    const out = join(world.dataDir, 'configured.jsonl');
    const run = await runCli(['jobs', 'export', '--labelled', '--out', out], { env: { WINNOWER_DATA_DIR: world.dataDir } });
    expect(run.code, run.stderr).toBe(0);
    expect(readJsonl(out)).toHaveLength(2 * INSTANCES.length);
    const both = await runCli(['jobs', 'export', '--data-dir', world.dataDir, '--store', 'postgres://h/db', '--out', out]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give one job store');
  }, 120_000);

  it('winnower jobs export --format atif of the /solve jobs validates and re-imports to the same messages', async () => {
    const out = join(world.dataDir, 'jobs.atif.jsonl');
    const run = await runCli(['jobs', 'export', '--data-dir', world.dataDir, '--format', 'atif', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const documents = readJsonl(out);
    // Every candidate with a trajectory: the gives-up rollouts too (3 per job).
    expect(documents).toHaveLength(3 * INSTANCES.length);
    for (const document of documents) expect(validateAtif(document).errors).toEqual([]);
    const exported = await labelledFromStore(world.dataDir);
    const imported = await importTrajectories(out);
    const byId = new Map(imported.items.map((trajectory) => [trajectory.id, trajectory]));
    for (const row of exported) expect(byId.get(row.trajectory.id)?.messages).toEqual(row.trajectory.messages);
  }, 120_000);
});
