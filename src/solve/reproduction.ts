/**
 * Stage: reproduction tests (verify.reproduction). Starts with the job, beside the candidate
 * rollouts: `n` test-writer rollouts by the job's policy (config/agents/test-writer.yaml, or a
 * harness), each in its own sandbox, each asked for one new test file reproducing the issue. A
 * test counts only when it fails on the base commit (in a fresh sandbox); one that passes there or
 * errors for an unrelated reason is discarded, with the reason. Then each finished candidate runs
 * every valid test: the pass matrix. A candidate's row runs in its prepared workspace (one sandbox:
 * base snapshot overlay + its patch), reset to that state before each test; without a git
 * checkout to reset with, each cell gets a fresh sandbox. The writers never see the candidates; a
 * test never overwrites a file.
 */
import { loadAgentConfig } from '../rollout/agent/agent-config.js';
import { toWinnowerError } from '../errors.js';
import { patchViolation } from '../sandbox/patch-rules.js';
import type { Sandbox } from '../sandbox/types.js';
import type { GeneratedTest, MatrixCell } from '../types/checks.js';
import type { Trajectory } from '../types/index.js';
import { extractTestFile, runTestFile } from '../verify/reproduction-test.js';
import { tailOf } from '../verify/verify-candidate.js';
import { prepareRollout, type RolloutSetup } from '../rollout/prepare-rollout.js';
import type { SolveContext, Slot } from './solve-context.js';
import type { SolveRequest } from './solve-request.js';
import { planPolicies } from './policy-plan.js';

export interface ReproductionStage {
  /** Runs every valid test against one finished candidate (after the writers are done). */
  check(slot: Slot): Promise<void>;
  /** Emits `matrix-finish` with the whole matrix. */
  finish(): void;
}

interface ValidTest {
  writer: number;
  file: string;
  content: string;
}

const SHOWN_CONTENT_BYTES = 16 * 1024;

/**
 * What a writer's rollout runs: the job's policy and agent (a mixed job's first policy), with the
 * writer's agent, harness, policy and limits.
 */
function writerRequest(request: SolveRequest): RolloutSetup {
  const options = request.verify.reproduction!;
  const first = planPolicies(request)[0]!;
  return {
    policy: options.policy ?? first.policy,
    agent: {
      ...first.agent,
      config: options.agent,
      harness: options.harness ?? first.agent.harness,
      time_limit_s: options.budget_s,
      ...(options.step_limit ? { step_limit: options.step_limit } : {}),
    },
  };
}

export function startReproduction(context: SolveContext): ReproductionStage {
  const options = context.request.verify.reproduction!;
  const signal = context.checksSignal;
  // The writers stop with the job or the stop rule (their tests are no longer needed then).
  const writerSignal = AbortSignal.any([context.signal, context.checksSignal]);
  const request = writerRequest(context.request);
  const agentConfig = loadAgentConfig(options.agent, {
    time_limit_s: options.budget_s,
    ...(options.step_limit ? { step_limit: options.step_limit } : {}),
  });
  const testTimeoutMs = options.timeout_s * 1000;

  const writeOne = async (writer: number): Promise<ValidTest | undefined> => {
    const started = Date.now();
    const record: GeneratedTest = {
      writer,
      trajectory_id: `${context.jobId}/test-writer/${writer}`,
      file: null,
      content: null,
      base_outcome: null,
      valid: false,
      discard_reason: null,
      base_log_tail: '',
      tokens: 0,
      policy_calls: 0,
      sandbox_ms: 0,
    };
    let valid: ValidTest | undefined;
    try {
      const trajectory = await context.budget.hold(async (): Promise<Trajectory> => {
        const prepared = await prepareRollout(context.deps, request, {
          task: context.task,
          agentConfig,
          trajectoryId: record.trajectory_id,
          index: writer,
          signal: writerSignal,
          onStep: () => undefined,
        });
        let sandbox: Sandbox | undefined;
        try {
          sandbox = await context.sandboxes.open({ mounts: prepared.mounts, signal: writerSignal });
          return await prepared.run(sandbox);
        } finally {
          await sandbox?.close().catch(() => undefined);
          await prepared.close().catch(() => undefined);
        }
      });
      record.tokens = (trajectory.usage?.prompt_tokens ?? 0) + (trajectory.usage?.completion_tokens ?? 0);
      record.policy_calls = trajectory.usage?.calls ?? 0;
      if (trajectory.exit === 'cancelled' || trajectory.exit === 'error' || trajectory.exit === 'timeout') {
        record.discard_reason = `the test writer ended with ${trajectory.exit}${trajectory.exit_raw ? `: ${trajectory.exit_raw}` : ''}`;
      } else {
        const extracted = extractTestFile(trajectory.patch);
        if ('discard' in extracted) record.discard_reason = extracted.discard;
        else {
          record.file = extracted.file;
          record.content =
            extracted.content.length > SHOWN_CONTENT_BYTES ? tailOf(extracted.content, SHOWN_CONTENT_BYTES) : extracted.content;
          const run = await context.budget.hold(async () => {
            const sandbox = await context.sandboxes.open({ signal });
            try {
              return await runTestFile(sandbox, extracted, { timeoutMs: testTimeoutMs, signal });
            } finally {
              await sandbox.close().catch(() => undefined);
            }
          });
          record.base_log_tail = tailOf(run.log_tail, 2048);
          record.base_outcome = run.outcome === 'conflict' ? null : run.outcome;
          if (run.outcome === 'failed') {
            record.valid = true;
            valid = { writer, ...extracted };
          } else if (run.outcome === 'passed') record.discard_reason = 'passes on the base commit: it does not reproduce the issue';
          else if (run.outcome === 'conflict') record.discard_reason = `overwrites a repository file (${extracted.file})`;
          else record.discard_reason = `fails on the base commit for an unrelated reason: ${run.reason ?? 'error'}`;
        }
      }
    } catch (error) {
      if (signal.aborted) throw error;
      const failure = toWinnowerError(error);
      record.discard_reason = `the test writer failed: ${failure.code}: ${failure.message}`;
    }
    record.sandbox_ms = Date.now() - started;
    context.emit({ type: 'repro-test-finish', writer, test: record });
    return valid;
  };

  const tests = Promise.all(Array.from({ length: options.n }, (_, writer) => writeOne(writer))).then((all) =>
    all.filter((test): test is ValidTest => test !== undefined),
  );
  tests.catch(() => undefined);
  context.background.push(tests);

  const runCell = async (slot: Slot, test: ValidTest): Promise<void> => {
    const trajectory = slot.trajectory!;
    const started = Date.now();
    const outcome = await context.budget
      .hold(async (): Promise<MatrixCell['outcome']> => {
        const sandbox = await context.sandboxes.open({ signal });
        try {
          try {
            await sandbox.applyPatch(trajectory.patch, { signal });
          } catch (error) {
            if (signal.aborted) throw error;
            return 'apply_failed';
          }
          return (await runTestFile(sandbox, test, { timeoutMs: testTimeoutMs, signal })).outcome;
        } finally {
          await sandbox.close().catch(() => undefined);
        }
      })
      .catch((error: unknown): MatrixCell['outcome'] => {
        if (signal.aborted) throw error;
        return 'error';
      });
    context.emit({
      type: 'matrix-cell-finish',
      cell: { index: slot.index, writer: test.writer, outcome, duration_ms: Date.now() - started },
    });
  };

  /**
   * The candidate's prepared workspace: one sandbox (base snapshot overlay + its patch, committed
   * there), each test run from a reset to that commit. False when the workdir is not a git
   * checkout: then every cell not yet recorded gets a fresh sandbox of its own (`runCell`).
   */
  const runRow = async (slot: Slot, valid: ValidTest[]): Promise<boolean> =>
    context.budget.hold(async () => {
      const trajectory = slot.trajectory!;
      const sandbox = await context.sandboxes.open({ signal });
      try {
        const applyStarted = Date.now();
        try {
          await sandbox.applyPatch(trajectory.patch, { signal });
        } catch (error) {
          if (signal.aborted) throw error;
          for (const test of valid)
            context.emit({
              type: 'matrix-cell-finish',
              cell: { index: slot.index, writer: test.writer, outcome: 'apply_failed', duration_ms: Date.now() - applyStarted },
            });
          return true;
        }
        const git = (command: string) =>
          sandbox.exec(`git -c user.name=winnower -c user.email=winnower@localhost ${command}`, { timeoutMs: 120_000, signal });
        const committed = await git(
          'add -A && git -c user.name=winnower -c user.email=winnower@localhost commit -q --no-verify --allow-empty -m candidate',
        );
        if (committed.exitCode !== 0) return false;
        for (const test of valid) {
          const started = Date.now();
          const outcome = await runTestFile(sandbox, test, { timeoutMs: testTimeoutMs, signal })
            .then((run) => run.outcome)
            .catch((error: unknown): MatrixCell['outcome'] => {
              if (signal.aborted) throw error;
              return 'error';
            });
          // Back to the candidate's prepared state: the test file and whatever the run wrote go away.
          const reset = await git('reset -q --hard && git clean -fdq');
          context.emit({
            type: 'matrix-cell-finish',
            cell: { index: slot.index, writer: test.writer, outcome, duration_ms: Date.now() - started },
          });
          if (reset.exitCode !== 0) throw new Error(`could not reset the workspace after a test: ${reset.stdout}${reset.stderr}`);
        }
        return true;
      } finally {
        await sandbox.close().catch(() => undefined);
      }
    });

  return {
    async check(slot) {
      if (!slot.trajectory || slot.trajectory.patch.trim() === '' || signal.aborted) return;
      const valid = await tests;
      if (valid.length === 0) return;
      // A patch the patch rules refuse (it would leave the repository) is never applied: its row is `apply_failed`.
      if (patchViolation(slot.trajectory.patch)) {
        for (const test of valid)
          context.emit({
            type: 'matrix-cell-finish',
            cell: { index: slot.index, writer: test.writer, outcome: 'apply_failed', duration_ms: 0 },
          });
        return;
      }
      const done = await runRow(slot, valid).catch((error: unknown) => {
        if (signal.aborted) throw error;
        return false;
      });
      if (done) return;
      // Cells not recorded yet (no git checkout, a reset that failed): each in a fresh sandbox.
      const recorded = new Set(context.evidence.cellsOf(slot.index));
      await Promise.all(valid.filter((test) => !recorded.has(test.writer)).map((test) => runCell(slot, test)));
    },
    finish() {
      context.emit({ type: 'matrix-finish', tests: context.evidence.validWriters(), rows: context.evidence.matrixRows() });
    },
  };
}
