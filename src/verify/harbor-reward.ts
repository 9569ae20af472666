/**
 * Harbor's reward, read from the host copy of /logs/verifier (docs/harbor.md#verification):
 * reward.json wins when it exists and must be a flat object of numbers; otherwise reward.txt holds
 * one number. Anything else (no file, an empty or unparsable one, a nested or non-numeric value, a
 * symbolic link, a file over the cap) is a verifier that could not be read, never a reward of 0.
 */
import { closeSync, constants as fs, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** Largest reward file read; real ones are a few bytes. */
export const MAX_REWARD_BYTES = 64 * 1024;

export type RewardRead =
  | { ok: true; file: 'reward.json' | 'reward.txt'; rewards: Record<string, number>; value: number }
  /** `file`: the reward file that was wrong, null when neither was written. */
  | { ok: false; file: 'reward.json' | 'reward.txt' | null; error: string };

/** The rewards in `dir`, and the one that decides: `reward`, or the only key of a reward.json. */
export function readHarborReward(dir: string): RewardRead {
  const json = readSmallFile(join(dir, 'reward.json'));
  if (json.kind === 'bad') return { ok: false, file: 'reward.json', error: `reward.json ${json.why}` };
  if (json.kind === 'file') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json.text);
    } catch {
      return { ok: false, file: 'reward.json', error: 'reward.json is not JSON' };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return { ok: false, file: 'reward.json', error: 'reward.json is not an object of numbers' };
    const entries = Object.entries(parsed);
    const bad = entries.find(([, value]) => typeof value !== 'number' || !Number.isFinite(value));
    if (bad) return { ok: false, file: 'reward.json', error: `reward.json key ${JSON.stringify(bad[0])} is not a number` };
    const rewards = Object.fromEntries(entries) as Record<string, number>;
    const key = 'reward' in rewards ? 'reward' : entries.length === 1 ? entries[0]![0] : undefined;
    if (key === undefined)
      return { ok: false, file: 'reward.json', error: `reward.json has no "reward" key among ${entries.length} keys, so none decides` };
    return { ok: true, file: 'reward.json', rewards, value: rewards[key]! };
  }
  const text = readSmallFile(join(dir, 'reward.txt'));
  if (text.kind === 'bad') return { ok: false, file: 'reward.txt', error: `reward.txt ${text.why}` };
  if (text.kind === 'missing') return { ok: false, file: null, error: 'the verifier wrote neither reward.json nor reward.txt' };
  const trimmed = text.text.trim();
  const value = Number(trimmed);
  if (trimmed === '' || !Number.isFinite(value))
    return { ok: false, file: 'reward.txt', error: `reward.txt does not hold one number (${JSON.stringify(trimmed.slice(0, 40))})` };
  return { ok: true, file: 'reward.txt', rewards: { reward: value }, value };
}

type SmallFile = { kind: 'missing' } | { kind: 'bad'; why: string } | { kind: 'file'; text: string };

/** A regular file's text, never through a symbolic link the sandbox planted, at most MAX_REWARD_BYTES. */
function readSmallFile(path: string): SmallFile {
  try {
    lstatSync(path);
  } catch {
    return { kind: 'missing' };
  }
  let fd: number;
  try {
    fd = openSync(path, fs.O_RDONLY | fs.O_NOFOLLOW | fs.O_NONBLOCK);
  } catch {
    return { kind: 'bad', why: 'is a symbolic link or cannot be opened' };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { kind: 'bad', why: 'is not a regular file' };
    if (stat.size > MAX_REWARD_BYTES) return { kind: 'bad', why: `is larger than ${MAX_REWARD_BYTES} bytes` };
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    return { kind: 'file', text: buffer.subarray(0, read).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}
