import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_REWARD_BYTES, readHarborReward } from '../../src/verify/harbor-reward.js';
import { tempDir } from '../support/temp-dir.js';

/** A verifier log folder holding `files`. */
function logs(files: Record<string, string>): string {
  const dir = tempDir('harbor-logs-');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

describe('readHarborReward', () => {
  it('reads reward.json as a flat object of numbers; its `reward` decides', () => {
    expect(readHarborReward(logs({ 'reward.json': '{"reward": 1, "coverage": 0.8}\n' }))).toEqual({
      ok: true,
      file: 'reward.json',
      rewards: { reward: 1, coverage: 0.8 },
      value: 1,
    });
  });

  it('takes the only key of a reward.json without `reward`, and refuses several without one', () => {
    expect(readHarborReward(logs({ 'reward.json': '{"score": 0.25}' }))).toMatchObject({ ok: true, value: 0.25 });
    expect(readHarborReward(logs({ 'reward.json': '{"a": 1, "b": 0}' }))).toEqual({
      ok: false,
      file: 'reward.json',
      error: 'reward.json has no "reward" key among 2 keys, so none decides',
    });
  });

  it('prefers reward.json over reward.txt, as Harbor does', () => {
    expect(readHarborReward(logs({ 'reward.json': '{"reward": 0}', 'reward.txt': '1' }))).toMatchObject({ file: 'reward.json', value: 0 });
  });

  it('reads reward.txt as one number after trimming', () => {
    expect(readHarborReward(logs({ 'reward.txt': ' 0.5\n' }))).toEqual({
      ok: true,
      file: 'reward.txt',
      rewards: { reward: 0.5 },
      value: 0.5,
    });
  });

  it('calls every malformed or missing file an error, never a reward of 0', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'the verifier wrote neither reward.json nor reward.txt'],
      [{ 'reward.txt': '' }, 'reward.txt does not hold one number'],
      [{ 'reward.txt': 'passed' }, 'reward.txt does not hold one number'],
      [{ 'reward.txt': '1 0' }, 'reward.txt does not hold one number'],
      [{ 'reward.json': '' }, 'reward.json is not JSON'],
      [{ 'reward.json': '[1]' }, 'reward.json is not an object of numbers'],
      [{ 'reward.json': '1' }, 'reward.json is not an object of numbers'],
      [{ 'reward.json': '{"reward": {"x": 1}}' }, 'reward.json key "reward" is not a number'],
      [{ 'reward.json': '{"reward": "1"}' }, 'reward.json key "reward" is not a number'],
      [{ 'reward.json': '{}' }, 'reward.json has no "reward" key among 0 keys'],
      [{ 'reward.txt': `${'1'.repeat(MAX_REWARD_BYTES + 1)}` }, `reward.txt is larger than ${MAX_REWARD_BYTES} bytes`],
    ];
    for (const [files, error] of cases) {
      const read = readHarborReward(logs(files));
      expect(read.ok, JSON.stringify(files).slice(0, 80)).toBe(false);
      expect(read.ok ? '' : read.error).toContain(error);
      // The file that was wrong, for the evidence record; none when neither was written.
      expect(read.ok ? undefined : read.file).toBe(Object.keys(files)[0] ?? null);
    }
  });

  it('does not follow a symbolic link the sandbox left', () => {
    const dir = logs({});
    const outside = logs({ 'secret.txt': '1' });
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'reward.txt'));
    expect(readHarborReward(dir)).toEqual({ ok: false, file: 'reward.txt', error: 'reward.txt is a symbolic link or cannot be opened' });
  });
});
