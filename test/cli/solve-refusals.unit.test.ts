/**
 * `winnower solve` refuses a flag that this run would ignore, naming it and what it needs, before
 * anything starts (src/cli/solve-action.ts); a replay file that is not there is named with its flag.
 */
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { runSolve } from '../../src/cli/solve-action.js';
import type { SolveFlags } from '../../src/cli/solve.js';

const RECORDINGS = fileURLToPath(new URL('../../examples/demo/trajectories/', import.meta.url));
const command = { getOptionValueSource: () => 'default' } as unknown as Command;
const base = { repo: '/nonexistent-repo-for-refusals', issue: 'x', n: 2 } as SolveFlags;

describe('solve: flags this run would ignore', () => {
  it.each([
    [{ writerReplay: [RECORDINGS] }, '--writer-replay', 'give --reproduction'],
    [{ replay: [RECORDINGS], policyMode: 'text' as const }, '--policy-mode', '--replay replays recordings'],
    [{ harnessModel: 'm' }, '--harness-model', 'give --harness'],
    [{ fork: false }, '--no-fork', 'give --setup'],
    [{ forkAt: 'setup' as const }, '--fork-at', 'give --setup'],
    [{ strategy: 'judge' }, '--strategy', 'give --judge-url and --judge-model'],
  ])('%o is refused naming %s', async (flags, flag, why) => {
    const error = await runSolve({ ...base, ...flags }, command).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', details: { field: flag } });
    expect((error as Error).message).toContain(`${flag}: `);
    expect((error as Error).message).toContain(why);
  });

  it('names --replay when its file is not there', async () => {
    const error = await runSolve({ ...base, replay: ['/no/such/recording.json'] }, command).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'WNW_ERR_INPUT_NOT_FOUND', details: { field: '--replay' } });
    expect((error as Error).message).toMatch(/^--replay: \/no\/such\/recording\.json/);
  });
});
