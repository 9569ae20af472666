/**
 * `winnower solve --policies <file>`: a mixed-policy job's `policies` from a YAML or JSON file (a
 * list, or `{policies: [...]}`), each entry as in the /solve body. One convenience for the command
 * line: `replay: <files>` (a path or glob, or a list; relative to the file) in place of an inline
 * replay policy, since recorded trajectories do not fit in a file by hand. The /solve schema
 * validates the rest and names the bad field (`body.policies.1.n`).
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';
import { wnwError } from '../errors.js';
import { importTrajectories } from '../formats/index.js';

const invalid = (file: string, message: string, field = '--policies') =>
  wnwError('WNW_ERR_INPUT_INVALID', `${file}: ${message}`, { details: { field } });

/** The file's entries with every `replay` turned into a replay policy of the recordings it names. */
export async function readPoliciesFile(file: string): Promise<Array<Record<string, unknown>>> {
  let parsed: unknown;
  try {
    parsed = parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw invalid(file, `not a readable YAML or JSON file: ${(error as Error).message}`);
  }
  const list = Array.isArray(parsed)
    ? parsed
    : parsed && typeof parsed === 'object'
      ? (parsed as { policies?: unknown }).policies
      : undefined;
  if (!Array.isArray(list) || list.length === 0) throw invalid(file, 'give a list of policies (or `policies:` with one), each with its n');
  return Promise.all(
    list.map(async (entry: unknown, index) => {
      if (!entry || typeof entry !== 'object' || Array.isArray(entry))
        throw invalid(file, `policies.${index}: an object with n (and policy, agent, name, waves)`, `policies.${index}`);
      const { replay, ...rest } = entry as Record<string, unknown>;
      if (replay === undefined) return rest;
      const paths = (Array.isArray(replay) ? replay : [replay]).map((path) => {
        if (typeof path !== 'string')
          throw invalid(file, `policies.${index}.replay: a path or a list of paths`, `policies.${index}.replay`);
        return isAbsolute(path) ? path : resolve(dirname(file), path);
      });
      if (rest.policy !== undefined) throw invalid(file, `policies.${index}: give replay or policy, not both`, `policies.${index}.replay`);
      const recordings = (await importTrajectories(paths, { sourceFrom: 'file' })).items;
      return { ...rest, policy: { kind: 'replay', recordings } };
    }),
  );
}
