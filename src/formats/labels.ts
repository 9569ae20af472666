import { z } from 'zod';
import type { Trajectory } from '../types/trajectory.js';
import { isRecord } from './chat-input.js';
import { importRecords, type DocumentRecord } from './import-records.js';
import { IssueCollector, invalidRecord } from './issues.js';
import { fileStem } from './read-input.js';
import type { ImportIssue, ImportOptions } from './types.js';

/** Ground truth per candidate: `${source}/${instance_id}` → resolved. */
export type Labels = Map<string, boolean>;

export interface LabelsResult {
  labels: Labels;
  /**
   * Candidates (`${source}/${instance_id}`) whose evaluation could not run (a harness report's
   * `error_ids`, or a row with `resolved: null`) and that no verdict labels: no label, and never
   * an unresolved one. A reader of several label files drops a label they carry from elsewhere
   * (a row's own `meta.resolved`) unless a file gives a verdict.
   */
  couldNotRun: Set<string>;
  issues: ImportIssue[];
}

export interface LabelOptions extends ImportOptions {
  /**
   * The source these labels are for. Required for SWE-bench `results.json` reports, which name no
   * source; for rows that carry one (`source` or `model_name_or_path`) it overrides theirs, as it
   * does for trajectories imported from the same file.
   */
  source?: string;
}

/**
 * One label row: `{instance_id, source, resolved}`; predictions rows with `resolved` fit too.
 * `resolved: null` says the evaluation could not run: no verdict, and never an unresolved one.
 */
export const LabelRecord = z.looseObject({
  instance_id: z.string().min(1),
  resolved: z.boolean().nullable(),
  source: z.string().min(1).optional(),
  model_name_or_path: z.string().min(1).optional(),
});

/** Id lists in a report that are not evaluation outcomes. */
const UNLABELLED_LISTS = new Set(['incomplete_ids']);
/**
 * Id lists of instances the harness could not evaluate (an image that did not build, an
 * evaluation that errored or timed out): says nothing about the patch, so never unresolved. They
 * are in `submitted_ids` too, so they are set apart before any other list is read.
 */
const COULD_NOT_RUN_LISTS = ['error_ids'];

export function labelKey(source: string, instanceId: string): string {
  return `${source}/${instanceId}`;
}

/** The label of one candidate, or undefined when there is none. */
export function lookupLabel(labels: Labels, instanceId: string, source: string): boolean | undefined {
  return labels.get(labelKey(source, instanceId));
}

/** Labels carried by imported candidates (`meta.resolved`, e.g. devstral rows or SWE-Gym rows). */
export function labelsFromTrajectories(trajectories: Iterable<Trajectory>): Labels {
  const labels: Labels = new Map();
  for (const trajectory of trajectories) {
    if (typeof trajectory.meta.resolved === 'boolean')
      labels.set(labelKey(trajectory.source, trajectory.instance_id), trajectory.meta.resolved);
  }
  return labels;
}

/** A SWE-bench run report: `resolved_ids` (harness, sb-cli) or `resolved` (older results.json) lists. */
function isIdListReport(value: Record<string, unknown>): boolean {
  const list = value.resolved_ids ?? value.resolved;
  return Array.isArray(list) && list.every((id) => typeof id === 'string');
}

/**
 * Report lists → one record per instance: resolved when listed as resolved, else could not run
 * when listed as such (`resolved: null`), else unresolved.
 */
function splitIdListReport(report: Record<string, unknown>): DocumentRecord[] {
  const resolved = new Set((report.resolved_ids ?? report.resolved) as string[]);
  const couldNotRun = new Set(COULD_NOT_RUN_LISTS.flatMap((key) => stringList(report[key])));
  const seen = new Set<string>();
  const out: DocumentRecord[] = [];
  const add = (id: string): void => {
    if (seen.has(id)) return;
    seen.add(id);
    const verdict = resolved.has(id) ? true : couldNotRun.has(id) ? null : false;
    out.push({ value: { instance_id: id, resolved: verdict }, record: id });
  };
  for (const id of resolved) add(id);
  for (const [key, list] of Object.entries(report)) {
    if (UNLABELLED_LISTS.has(key) || !Array.isArray(list)) continue;
    for (const id of list) if (typeof id === 'string') add(id);
  }
  return out;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string') : [];
}

function splitLabels(file: string, options: LabelOptions): (document: unknown) => DocumentRecord[] {
  return (document) => {
    if (Array.isArray(document)) return document.map((value, index) => ({ value, record: index }));
    if (!isRecord(document)) return [{ value: document }];
    if (isIdListReport(document)) return splitIdListReport(document);
    if (typeof document.resolved === 'boolean') {
      // A flat per-instance report.json; the instance comes from the record, the options or the file name.
      return [{ value: { instance_id: options.instanceId ?? fileStem(file), ...document } }];
    }
    const entries = Object.entries(document);
    if (entries.length > 0 && entries.every(([, entry]) => isRecord(entry) && 'resolved' in entry)) {
      // The harness's per-instance report.json: {instance_id: {resolved, tests_status, ...}}.
      return entries.map(([key, entry]) => ({ value: { instance_id: key, ...(entry as object) }, record: key }));
    }
    return [{ value: document }];
  };
}

/**
 * Reads labels: SWE-bench `results.json` / run reports (id lists; pass `source`), per-instance
 * `report.json`, or rows `{instance_id, source, resolved}` as JSONL or a JSON array (candidate rows
 * with a `resolved` field included). Conflicting labels for one candidate are issues.
 */
export async function importSwebenchLabels(file: string, options: LabelOptions = {}): Promise<LabelsResult> {
  const issues = new IssueCollector(options.onInvalid);
  const result = await importRecords(
    file,
    options,
    {
      convert: (value, context) => {
        const record = LabelRecord.parse(value);
        const source = options.source ?? record.source ?? record.model_name_or_path;
        if (source === undefined) throw invalidRecord('source', 'missing: pass the source (run name) these labels are for');
        return { key: labelKey(source, record.instance_id), resolved: record.resolved, context };
      },
      split: splitLabels(file, options),
    },
    issues,
  );
  const labels: Labels = new Map();
  const couldNotRun = new Set<string>();
  for (const { key, resolved, context } of result.items) {
    if (resolved === null) {
      couldNotRun.add(key);
      continue;
    }
    const previous = labels.get(key);
    if (previous !== undefined && previous !== resolved) {
      issues.report(context, 'resolved', `conflicting labels for ${key}: ${previous} and ${resolved}`);
      continue;
    }
    labels.set(key, resolved);
  }
  for (const key of labels.keys()) couldNotRun.delete(key);
  return { labels, couldNotRun, issues: issues.issues };
}

/**
 * Label files' verdicts over labels from elsewhere (the rows' own `meta.resolved`): a file's
 * verdict wins, and a candidate a file says could not run loses the label it had.
 */
export function applyLabelFiles(labels: Labels, files: readonly LabelsResult[]): void {
  for (const file of files) for (const key of file.couldNotRun) labels.delete(key);
  for (const file of files) for (const [key, resolved] of file.labels) labels.set(key, resolved);
}
