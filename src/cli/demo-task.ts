/** The demo's sample task (examples/demo): its task record and its recorded trajectories. */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Trajectory } from '../types/trajectory.js';
import { packageRoot } from '../util/package-root.js';

export const demoDir = (): string => join(packageRoot(), 'examples', 'demo');

export interface DemoTask {
  instance_id: string;
  problem_statement: string;
  test_command: string;
  fail_to_pass: string[];
  pass_to_pass: string[];
  test_patch: string;
}

export const demoTask = (): DemoTask => JSON.parse(readFileSync(join(demoDir(), 'task.json'), 'utf8')) as DemoTask;

/** The recorded trajectories by name (correct-fix, plausible-wrong-fix, breaks-other-tests, gives-up), in name order. */
export function demoRecordings(folder = join(demoDir(), 'trajectories')): Record<string, Trajectory> {
  const out: Record<string, Trajectory> = {};
  for (const file of readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    out[file.replace(/\.json$/, '')] = Trajectory.parse(JSON.parse(readFileSync(join(folder, file), 'utf8')));
  }
  return out;
}

/** The same recordings as a harness gets them (its own tool names, a text turn at the end), or none for that harness. */
export function demoHarnessRecordings(harness: string): Record<string, Trajectory> {
  const folder = join(demoDir(), 'harnesses', harness);
  return existsSync(folder) ? demoRecordings(folder) : {};
}

/** The bash commands of a recording, in order (to script a fake or stub policy with). */
export function commandsOf(trajectory: Trajectory): string[] {
  return trajectory.messages.flatMap((message) =>
    (message.tool_calls ?? []).map((call) => (JSON.parse(call.function.arguments) as { command: string }).command),
  );
}

/**
 * A /solve body for the demo task with verification on (its test command, FAIL_TO_PASS,
 * PASS_TO_PASS and hidden test patch); `extra` adds or overrides fields.
 */
export function demoSolveBody(
  repo: string,
  limits: { verifyTimeoutS: number; agent: Record<string, unknown> },
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const task = demoTask();
  return {
    instance_id: task.instance_id,
    issue: task.problem_statement,
    repo: { path: repo },
    verify: {
      enabled: true,
      test_command: task.test_command,
      fail_to_pass: task.fail_to_pass,
      pass_to_pass: task.pass_to_pass,
      test_patch: task.test_patch,
      timeout_s: limits.verifyTimeoutS,
    },
    agent: { config: 'default', ...limits.agent },
    ...extra,
  };
}
