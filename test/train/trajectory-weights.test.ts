/**
 * Trajectory-signal weights learned from labelled history (issue 19 item 5): a synthetic history
 * where finishing with a submission (traj_submitted) decides the label and agreement points the
 * other way (the three failures share one patch). `winnower train` learns a positive weight for
 * it, writes it with its row count into selector.json, checks it on held-out sources, and robust
 * selection then follows it; without the weights robust keeps today's order.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSelector } from '../../src/scoring/model-folder.js';
import { robustScore, SELECTOR_FORMAT, select, type Candidate, type LearnedSelector } from '../../src/select/index.js';
import type { TrajectoryWeights } from '../../src/select/trajectory-weights.js';
import { loadDataset } from '../../src/train/dataset.js';
import { fitTrajectoryWeights, unscoredSelectorPools } from '../../src/train/fit-trajectory.js';
import { CROSS_FITTED, crossFitCandidates, ZERO_SHOT } from '../../src/train/cross-fit.js';
import { ROBUST_FIXED } from '../../src/train/eval-pools.js';
import { train, type TrainResult } from '../../src/train/train.js';
import { serializeTrajectory } from '../../src/serialize/index.js';
import { Trajectory } from '../../src/types/index.js';
import { tempDir } from '../support/temp-dir.js';

const FAMILIES = ['alpha', 'beta', 'gamma'];

/** The candidate that resolves `instance`: its position varies. */
const winnerOf = (instance: string) => Number(/\d+$/.exec(instance)![0]) % 4;

/** One instance's four candidates: one submitted fix (resolved), three identical step-limit patches (unresolved). */
function pool(instance: string, family: string): Trajectory[] {
  return [0, 1, 2, 3].map((c) => {
    const resolved = c === winnerOf(instance);
    const line = resolved
      ? `    widget = repaired_${instance.replace(/\W/g, '_')}(value)`
      : `    widget = patched_${instance.replace(/\W/g, '_')}(value)`;
    return Trajectory.parse({
      id: `${family}/agent/${instance}/${c}`,
      instance_id: instance,
      // One configuration per family: its record is the same for every candidate, so only the trajectory can tell them apart.
      source: `${family}/agent`,
      messages: [
        { role: 'system', content: 'You are a software engineer.' },
        { role: 'user', content: `Fix the widget bug in ${instance}.` },
        {
          role: 'assistant',
          content: 'Look at the widget code.',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'grep -rn widget src' }) } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'src/widgets.py:1: def build(value):', meta: { observation: true } },
        {
          role: 'assistant',
          content: 'Edit it.',
          tool_calls: [
            {
              id: 'c2',
              type: 'function',
              function: { name: 'bash', arguments: JSON.stringify({ command: "sed -i 's/old/new/' src/widgets.py" }) },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c2', content: '', meta: { observation: true } },
      ],
      patch: `diff --git a/src/widgets.py b/src/widgets.py\n--- a/src/widgets.py\n+++ b/src/widgets.py\n@@ -1,1 +1,2 @@\n def build(value):\n+${line}\n`,
      exit: resolved ? 'submitted' : 'step_limit',
      meta: { resolved },
    });
  });
}

function writeHistory(instancesPerFamily: number): { dir: string; rollouts: string; tasks: string } {
  const dir = tempDir('winnower-traj-weights-');
  const rows: Trajectory[] = [];
  const tasks: string[] = [];
  FAMILIES.forEach((family, f) => {
    for (let i = 0; i < instancesPerFamily; i++) {
      const instance = `acme__widgets-${f * 100 + i}`;
      rows.push(...pool(instance, family));
      tasks.push(JSON.stringify({ instance_id: instance, repo: 'acme/widgets', problem_statement: `The widget breaks in ${instance}.` }));
    }
  });
  const rollouts = join(dir, 'history.jsonl');
  writeFileSync(rollouts, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
  writeFileSync(join(dir, 'tasks.jsonl'), `${tasks.join('\n')}\n`);
  return { dir, rollouts, tasks: join(dir, 'tasks.jsonl') };
}

const candidatesOf = (instance: string): Candidate[] => pool(instance, 'delta').map((trajectory) => ({ trajectory }));
const EMPTY: LearnedSelector = { format: SELECTOR_FORMAT, signals: [] };

describe('trajectory weights learned from labelled history', () => {
  let history: ReturnType<typeof writeHistory>;
  let result: TrainResult;

  beforeAll(async () => {
    history = writeHistory(10);
    result = await train({
      rollouts: [history.rollouts],
      tasks: [history.tasks],
      out: join(history.dir, 'model'),
      seed: 1,
      folds: 2,
      maxEpochs: 2,
      vocabSize: 500,
      bigramBuckets: 1024,
      dims: 4,
      hidden: 4,
      budgetTokens: 1024,
      bootstrap: 20,
      baselineModel: null,
    });
  }, 300_000);

  it('train learns a positive weight for the signal that predicts the label, with the rows it came from, into selector.json', () => {
    const trajectory = loadSelector(result.outDir)!.trajectory!;
    expect(trajectory).toBeDefined();
    expect(trajectory.robust.traj_submitted).toBeGreaterThan(0.7);
    expect(trajectory.learned.traj_submitted).toBeGreaterThan(0.3);
    // Signals that do not vary within a pool stay at their fixed priors.
    expect(trajectory.robust.traj_last_test_passed).toBeCloseTo(0.25, 6);
    expect(trajectory.rows).toBeGreaterThan(0);
    expect(trajectory.rows).toBe(4 * trajectory.pools);
    expect(trajectory.use).toBe(true);
    // Checked on the held-out sources: robust with the weights is at least as good as with the fixed priors.
    expect(trajectory.reason).toMatch(/used: on leave-one-source-out .* at least as good as the fixed priors/);
    expect(result.tables[0]!.rows.map((row) => row.selector)).toContain(ROBUST_FIXED);
    const card = JSON.parse(readFileSync(join(result.outDir, 'config.json'), 'utf8'));
    expect(card.winnower.selector.trajectory_weights.robust.traj_submitted).toBeCloseTo(trajectory.robust.traj_submitted, 9);
  });

  it("the value model's tokenizer knows the agent's actions given as tool calls (they are in what it is served)", async () => {
    const vocab = JSON.parse(readFileSync(join(result.outDir, 'tokenizer.json'), 'utf8')).model.vocab as Record<string, number>;
    // 'grep' and 'sed' occur only in tool-call arguments; judge-v1 renders them as the steps' actions.
    expect(vocab).toHaveProperty('grep');
    expect(vocab).toHaveProperty('sed');
    const [trajectory] = pool('acme__widgets-1', 'alpha');
    const served = await serializeTrajectory(
      { instance_id: 'acme__widgets-1', problem_statement: 'p', fail_to_pass: [], pass_to_pass: [], meta: {} },
      trajectory!,
      { template: 'judge-v1', budgetTokens: 4096 },
    );
    expect(served.text).toContain('grep -rn widget src');
    expect(served.text).toContain('src/widgets.py:1: def build(value):');
  });

  const WINNER = `delta/agent/acme__widgets-999/${winnerOf('acme__widgets-999')}`;

  it('robust and learned selection use the learned weights: the submitted fix wins over the three agreeing failures', () => {
    const selector = loadSelector(result.outDir)!;
    const candidates = candidatesOf('acme__widgets-999');
    expect(select('robust', candidates, { selector }).chosen).toBe(WINNER);
    expect(select('learned', candidates, { selector }).chosen).toBe(WINNER);
    const robust = select('robust', candidates, { selector });
    expect(robust.ranking[0]!.reasons.join(' ')).toMatch(/of which trajectory [\d.]+ \(weights fitted on \d+ labelled candidates\)/);
    expect(robust.reason).toMatch(/plus fitted trajectory weights \([\d.]+, trajectory [\d.]+\)/);
  });

  it('without the weights (or with use: false) robust keeps its fixed priors: agreement wins, as before', () => {
    const selector = loadSelector(result.outDir)!;
    const candidates = candidatesOf('acme__widgets-999');
    const fixed = select('robust', candidates, { selector: { ...selector, trajectory: undefined } });
    expect(fixed.chosen).not.toBe(WINNER);
    expect(select('robust', candidates, { selector: { ...selector, trajectory: { ...selector.trajectory!, use: false } } })).toEqual(fixed);
    expect(select('robust', candidates)).toEqual(select('robust', candidates, { selector: EMPTY }));
  });
});

describe('fitTrajectoryWeights', () => {
  it('rerank --cross-fit fits them on the other folds: own history with trajectories beats robust without it', async () => {
    const history = writeHistory(10);
    const dataset = await loadDataset({ rollouts: [history.rollouts], tasks: [history.tasks] });
    const { table } = crossFitCandidates(dataset.candidates, { folds: 3, bootstrap: 20 });
    const selected = (name: string) => table.rows.find((row) => row.selector === name)!.selected_at_1.value!;
    expect(selected(ZERO_SHOT)).toBe(0);
    expect(selected(CROSS_FITTED)).toBe(1);
  });

  it('shrinks toward the fixed priors when data is scarce and counts only pools with both outcomes', async () => {
    const history = writeHistory(10);
    const dataset = await loadDataset({ rollouts: [history.rollouts], tasks: [history.tasks] });
    const pools = unscoredSelectorPools(dataset.candidates);
    const many = fitTrajectoryWeights(pools, EMPTY)!;
    const one = fitTrajectoryWeights(pools.slice(0, 1), EMPTY)!;
    expect(many.pools).toBe(30);
    expect(one.pools).toBe(1);
    expect(one.robust.traj_submitted).toBeGreaterThan(0);
    expect(one.robust.traj_submitted).toBeLessThan(many.robust.traj_submitted / 4);
    // A pool whose candidates all failed says nothing: it is not counted.
    const failedOnly = { ...pools[0]!, labels: pools[0]!.labels.map(() => false) };
    expect(fitTrajectoryWeights([failedOnly], EMPTY)).toBeUndefined();
    expect(fitTrajectoryWeights([...pools.slice(0, 3), failedOnly], EMPTY)!.rows).toBe(12);
    // Patch-only candidates carry no trajectory: no weights.
    expect(
      fitTrajectoryWeights(
        pools.map((p) => ({ ...p, trajectory: p.labels.map(() => false) })),
        EMPTY,
      ),
    ).toBeUndefined();
  });

  it("robustScore with no weights is today's score: agreement plus 0.25 × last test passed", () => {
    const candidates = candidatesOf('acme__widgets-1');
    const fitted: TrajectoryWeights = {
      rows: 4,
      pools: 1,
      prior_strength: 8,
      robust: { traj_steps: 0, traj_ran_tests: 0, traj_last_test_passed: 0.25, traj_submitted: 0 },
      learned: { traj_steps: 0, traj_ran_tests: 0.2, traj_last_test_passed: 0.5, traj_submitted: 0.3 },
      use: true,
      reason: 'r',
    };
    const signals = {
      line_agreement: 0.5,
      file_agreement: 1,
      traj_last_test_passed: 1,
      traj_steps: 2,
      traj_ran_tests: 1,
      traj_submitted: 1,
    } as Parameters<typeof robustScore>[0];
    expect(robustScore(signals)).toBe(0.5 + 1 + 0.25);
    expect(robustScore(signals, fitted.robust)).toBe(robustScore(signals));
    expect(select('robust', candidates, { selector: { ...EMPTY, trajectory: fitted } }).chosen).toBe(select('robust', candidates).chosen);
  });
});
