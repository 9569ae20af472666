/**
 * Candidate inputs as `winnower rerank --candidates` and `winnower train --rollouts` both take them:
 * files, folders or globs, each optionally named `NAME=PATH` (the run it holds). One rule names the
 * source of plain paths for both commands: `--source-from file` (each file is a run, named after
 * the file; the default when the paths are several files, a glob counting as the files it matches)
 * or `record` (the source the records name). A trajectory id seen twice across inputs is refused
 * (or skipped and reported with `onInvalid: 'skip'`), naming the flag that tells runs apart.
 */
import { existsSync } from 'node:fs';
import { wnwError } from '../errors.js';
import type { Trajectory } from '../types/trajectory.js';
import { pushAll } from '../util/large-arrays.js';
import { expandInputs, isGlob } from './expand-inputs.js';
import { checkFormat, importTrajectories, importTrajectoryFiles } from './index.js';
import type { ImportIssue, ImportResult, OnInvalid } from './types.js';

/** `run-a=preds/a.jsonl` → a named input; a path that exists as given (even with `=`) stays a path. */
export function namedInput(argument: string): { name?: string; path: string } {
  const match = /^([A-Za-z0-9][\w.-]*)=(.+)$/.exec(argument);
  if (!match || existsSync(argument)) return { path: argument };
  return { name: match[1]!, path: match[2]! };
}

export interface ImportRunsOptions {
  /** The flag the inputs came from (`--candidates`, `--rollouts`), named in errors. */
  flag: string;
  format?: string;
  /** Default: `file` when the plain paths are several files, else `record`. */
  sourceFrom?: 'record' | 'file';
  onInvalid?: OnInvalid;
  signal?: AbortSignal;
  /** Each candidate handed here as it is read (ids checked for duplicates) instead of collected: `items` comes back empty. */
  onItem?: (trajectory: Trajectory) => void;
}

/**
 * The files plain paths stand for, expanded once (the import reads these, in expandInputs' order),
 * and how many runs they count as: a glob as the files it matches (as the shell would pass them),
 * a file or folder as one.
 */
async function expandRuns(paths: readonly string[]): Promise<{ files: string[]; count: number }> {
  const files = new Set<string>();
  let count = 0;
  for (const path of paths) {
    const matched = await expandInputs([path]);
    count += isGlob(path) ? matched.length : 1;
    for (const file of matched) files.add(file);
  }
  return { files: [...files], count };
}

/** Imports every input: plain paths under the `sourceFrom` rule, `NAME=PATH` under NAME. */
export async function importRuns(inputs: readonly string[], options: ImportRunsOptions): Promise<ImportResult<Trajectory>> {
  const named = inputs.map(namedInput);
  const plain = named.filter((input) => input.name === undefined).map((input) => input.path);
  // An unknown format is named before any missing file, as importTrajectories does.
  if (plain.length) checkFormat(options.format);
  const expanded = plain.length ? await expandRuns(plain) : undefined;
  const items: Trajectory[] = [];
  const issues: ImportIssue[] = [];
  const seen = new Set<string>();
  const take = (trajectory: Trajectory): void => {
    if (seen.has(trajectory.id)) {
      const message = `duplicate trajectory id ${trajectory.id}: name each run (${options.flag} NAME=PATH) or use --source-from file`;
      if (options.onInvalid !== 'skip')
        throw wnwError('WNW_ERR_INPUT_INVALID', message, { details: { field: options.flag.replace(/^--/, ''), id: trajectory.id } });
      issues.push({ code: 'WNW_ERR_INPUT_INVALID', file: inputs.join(','), record: trajectory.id, field: 'id', message });
      return;
    }
    seen.add(trajectory.id);
    if (options.onItem) options.onItem(trajectory);
    else items.push(trajectory);
  };
  const sink = options.onItem;
  const importOptions = {
    format: options.format,
    onInvalid: options.onInvalid,
    signal: options.signal,
    ...(sink ? { onItem: (item: unknown) => take(item as Trajectory) } : {}),
  };
  const groups: Array<() => Promise<ImportResult<Trajectory>>> = [
    ...(expanded
      ? [
          () =>
            importTrajectoryFiles(expanded.files, {
              ...importOptions,
              sourceFrom: options.sourceFrom ?? (expanded.count > 1 ? 'file' : 'record'),
            }),
        ]
      : []),
    ...named
      .filter((input) => input.name !== undefined)
      .map((input) => () => importTrajectories(input.path, { ...importOptions, source: input.name })),
  ];
  // With a sink the groups are read one after another, so candidates reach it in input order.
  const results = sink ? [] : await Promise.all(groups.map((group) => group()));
  if (sink) for (const group of groups) results.push(await group());
  for (const group of results) {
    pushAll(issues, group.issues);
    for (const trajectory of group.items) take(trajectory);
  }
  return { items, issues };
}
